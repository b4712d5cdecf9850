//! Graph captures against cuda-gl's stream-ordered calls: cudarc's `begin_capture` is safe, so
//! safe code can capture a stream that cuda-gl queues work on, from any thread.

use super::*;

/// On a cudarc stream under capture (cudarc's `begin_capture` is safe), cuda-gl's stream-ordered
/// copies and memsets are refused: captured, they would not run now but in a graph launched
/// later, after the mapping or the buffer is gone.
#[test]
fn stream_ordered_calls_on_a_capturing_stream_are_refused() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let Some(r) = rig() else { return };
    let (w, h) = (16usize, 16usize);
    let (texture, mut image) = registered_texture(&r, w, h);
    let mut device = cuda_gl::DeviceBuffer::<u32>::zeroed(&r.ctx, w * h).unwrap();
    let mapped = image.map(&r.stream).unwrap();
    let array = mapped.array(0, 0).unwrap();
    r.stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let copy = array.copy_to_device(&mut device);
    let memset = device.memset_async(0, &r.stream);
    let graph = r
        .stream
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .unwrap();
    drop(graph);
    mapped.unmap().unwrap();
    assert!(
        copy.is_err(),
        "a copy out of a mapped array was queued on a capturing stream"
    );
    assert!(
        memset.is_err(),
        "a memset of a device buffer was queued on a capturing stream"
    );
    drop(device);
    drop_and_delete_texture(&r, image, texture);
}

/// A cudarc copy through a mapped view on a capturing stream is not left in a graph: cuda-gl
/// synchronizes the stream when cudarc drops the view's ordering guard, which invalidates the
/// capture, so `end_capture` gives no graph that holds the mapping's address.
#[test]
fn a_cudarc_copy_into_a_view_cannot_be_captured() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let Some(r) = rig() else { return };
    let n = 4096;
    let name = gl_buffer(n * 4, None);
    let mut res = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();
    let mut mapped = res.map(&r.stream).unwrap();
    // SAFETY: (1) no other thread captures on this stream meanwhile.
    let mut view = unsafe { mapped.as_cudarc_slice_mut::<u32>() }.unwrap();
    r.stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let _ = r.stream.memset_zeros(&mut view);
    // The refusal is recorded on the cudarc context, and cudarc's next call (`end_capture`
    // would be it) reports it instead of running: cleared first.
    let _ = r.cu.check_err();
    let graph = r
        .stream
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    assert!(
        !matches!(graph, Ok(Some(_))),
        "a graph holds a memset of the mapped view"
    );
    drop(graph);
    let _ = r.cu.check_err();
    mapped.unmap().unwrap();
    drop(res);
    r.ctx.check_drop_errors().unwrap();
    delete_buffer(name);
}

/// How many copy and memset nodes `graph` has: the work cuda-gl queues (an event record node of
/// cuda-gl's, from a join that the capture took before cuda-gl refused, moves no bytes).
fn graph_work_nodes(graph: &cudarc::driver::CudaGraph) -> usize {
    use cudarc::driver::sys::{self as rs, CUgraphNodeType as T};
    let mut count = 0usize;
    // SAFETY: a live graph; a null node array asks for the count only.
    let status = unsafe { rs::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut count) };
    assert_eq!(status, rs::CUresult::CUDA_SUCCESS);
    if count == 0 {
        return 0;
    }
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` has room for `count` nodes.
    let status = unsafe { rs::cuGraphGetNodes(graph.cu_graph(), nodes.as_mut_ptr(), &mut count) };
    assert_eq!(status, rs::CUresult::CUDA_SUCCESS);
    nodes
        .iter()
        .take(count)
        .filter(|&&node| {
            let mut kind = T::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of the live graph; `kind` is a valid out-pointer.
            unsafe { rs::cuGraphNodeGetType(node, &mut kind) };
            matches!(
                kind,
                T::CU_GRAPH_NODE_TYPE_MEMCPY | T::CU_GRAPH_NODE_TYPE_MEMSET
            )
        })
        .count()
}

/// Sets the flag when dropped, so that a helper thread stops when the test panics.
struct StopOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Another thread beginning and ending captures on the stream while cuda-gl copies on it never
/// gets a graph with cuda-gl's work in it: that work runs on cuda-gl's private stream, joined to
/// the caller's by events, and a join whose record a capture took is refused. Captures are
/// active, and end, while cuda-gl's calls run.
///
/// One overlap is kept out, with a lock: a call that queues anything on a stream (cudarc's own
/// `memset_zeros` as much as cuda-gl's event record) while another thread is inside
/// `cuStreamBeginCapture` on it crashes driver 580 in the queuing thread
/// (`docs/repro/capture_race.py`, modes `record` and `memset`; `records/gpu-runs.md`). No library
/// can order work on a stream without queueing on it, so this test does not race that one call.
#[test]
fn captures_racing_cuda_gls_copies_never_take_one() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(r) = rig() else { return };
    let n = 1 << 16;
    let mut device = cuda_gl::DeviceBuffer::<u32>::zeroed(&r.ctx, n).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopper = StopOnDrop(stop.clone());
    let begin = Arc::new(std::sync::Mutex::new(()));
    let capturer = {
        let (stream, stop, begin) = (r.stream.clone(), stop.clone(), begin.clone());
        std::thread::spawn(move || {
            let (mut graphs, mut with_nodes) = (0usize, 0usize);
            while !stop.load(Ordering::Relaxed) {
                let begun = {
                    let _begin = begin.lock().unwrap();
                    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
                };
                if begun.is_err() {
                    continue;
                }
                std::hint::spin_loop();
                if let Ok(Some(graph)) = stream.end_capture(
                    CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
                ) {
                    graphs += 1;
                    if graph_work_nodes(&graph) > 0 {
                        with_nodes += 1;
                    }
                }
            }
            (graphs, with_nodes)
        })
    };
    let data = pattern_words(n, 3);
    let (mut ran, mut refused) = (0usize, 0usize);
    for _ in 0..2000 {
        let memset = {
            let _begin = begin.lock().unwrap();
            device.memset_async(1, &r.stream)
        };
        match memset {
            Ok(()) => ran += 1,
            Err(Error::StreamCapturing { .. }) => refused += 1,
            Err(e) => panic!("memset_async: {e}"),
        }
        let copy = {
            let _begin = begin.lock().unwrap();
            device.copy_from_slice_on(&data, &r.stream)
        };
        match copy {
            Ok(()) => ran += 1,
            Err(Error::StreamCapturing { .. }) => refused += 1,
            Err(e) => panic!("copy_from_slice_on: {e}"),
        }
    }
    drop(stopper);
    let (graphs, with_nodes) = capturer.join().unwrap();
    eprintln!(
        "{ran} calls ran, {refused} refused; the other thread ended {graphs} captures with a \
         graph, {with_nodes} of them with copies or memsets"
    );
    assert_eq!(with_nodes, 0, "{with_nodes} graphs took cuda-gl's work");
    let _ = r.cu.check_err();
    drop(device);
    let _ = r.ctx.check_drop_errors();
}

/// The drop of a registration whose guard was leaked while another stream captures a graph in
/// the global mode (cudarc's `begin_capture` is safe): the recovery's `cuCtxSynchronize` is
/// refused during the capture, so the leaked guard's work is not known to be done, and the
/// registration is leaked (its GL buffer stays claimed), not unmapped and unregistered under
/// that work. Before, only a timeout leaked it: any other failure of the wait went on to
/// unregister.
#[test]
fn a_leaked_mappings_drop_during_a_global_capture_leaks_the_registration() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let Some(r) = rig() else { return };
    let name = gl_buffer(4096, None);
    let mut res = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();
    std::mem::forget(res.map(&r.stream).unwrap());
    let capturing = r.cu.new_stream().unwrap();
    capturing
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        .unwrap();
    drop(res);
    // The refused synchronize invalidated the capture: its end fails, and cudarc's recorded
    // error is cleared.
    drop(
        capturing
            .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH),
    );
    let _ = r.cu.check_err();
    let recorded = r.ctx.take_drop_errors();
    println!("recorded: {recorded:?}");
    if recorded.is_empty() {
        // This driver let cuCtxSynchronize through during the capture: the recovery waited and
        // released the registration, so the buffer registers again.
        println!("cuCtxSynchronize was not refused during a global capture here");
        let again = RegisteredBuffer::register(&r.ctx, name, RegisterFlags::NONE).unwrap();
        unregister_and_delete(&r.ctx, again, name);
        return;
    }
    assert!(
        recorded.iter().any(
            |e| e.call == "cuCtxSynchronize" && e.name.starts_with("CUDA_ERROR_STREAM_CAPTURE")
        ),
        "{recorded:?}"
    );
    // Leaked, not unregistered: the buffer is still claimed (it goes with the GL context at the
    // end of the test).
    gpu::second_registration_refused(&r.ctx, name);
    r.stream.synchronize().unwrap();
}
