//! The command line's parsing, defaults and refusals.

use super::*;
use clap::CommandFactory;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("plasma-demo").chain(args.iter().copied()))
}

fn run(args: &[&str]) -> RunArgs {
    match parse(args) {
        Ok(cli) => {
            assert!(cli.command.is_none());
            cli.run
        }
        Err(e) => panic!("{args:?} did not parse: {e}"),
    }
}

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn defaults() {
    let r = run(&[]);
    assert_eq!(r.backend, BackendChoice::Auto);
    assert_eq!(r.path, PathChoice::Auto);
    assert_eq!(r.size, Size::new(1280, 720).unwrap());
    assert_eq!(r.frames, None);
    assert_eq!(r.time, None);
    assert!(!r.vsync && !r.headless && !r.bench && !r.json);
    assert_eq!(r.device, 0);
    assert_eq!(r.display(), Display::Window);
    assert_eq!(r.frame_limit(), None);
}

#[test]
fn every_flag() {
    let r = run(&[
        "--backend",
        "cuda",
        "--path",
        "pbo",
        "--size",
        "1366x767",
        "--frames",
        "7",
        "--time",
        "1.5",
        "--device",
        "2",
        "--screenshot",
        "out.png",
        "--headless",
    ]);
    assert_eq!(r.backend, BackendChoice::Cuda);
    assert_eq!(r.path, PathChoice::Pbo);
    assert_eq!((r.size.width, r.size.height), (1366, 767));
    assert_eq!(r.frames, Some(7));
    assert_eq!(r.time, Some(1.5));
    assert_eq!(r.device, 2);
    assert_eq!(r.screenshot, Some(PathBuf::from("out.png")));
    assert_eq!(r.display(), Display::Headless);
    assert_eq!(r.frame_limit(), Some(7));
}

#[test]
fn auto_is_the_default_path_and_the_benchmarked_paths_are_kept() {
    assert_eq!(run(&[]).path, PathChoice::Auto);
    for (name, path, display) in [
        ("auto", PathChoice::Auto, true),
        ("interop", PathChoice::Interop, true),
        ("staged", PathChoice::Staged, true),
        ("surface", PathChoice::Surface, false),
        ("pbo", PathChoice::Pbo, false),
        ("stream", PathChoice::Stream, false),
    ] {
        let r = run(&["--path", name]);
        assert_eq!(r.path, path, "{name}");
        assert_eq!(path.to_string(), name);
        assert_eq!(path.is_display(), display, "{name}");
        // The display paths mix with every backend and display, like the others.
        let r = run(&["--headless", "--backend", "cuda", "--path", name]);
        assert_eq!((r.path, r.backend), (path, BackendChoice::Cuda));
    }
    // Every value clap accepts is one of the above.
    assert_eq!(PathChoice::value_variants().len(), 6);
    let help = Cli::command().render_long_help().to_string();
    assert!(help.contains("[default: auto]"), "{help}");
    for name in ["auto", "interop", "staged", "surface", "pbo", "stream"] {
        assert!(
            help.contains(&format!("{name}:")),
            "--path {name} is not in\n{help}"
        );
    }
    assert!(
        help.contains("--path staged"),
        "no example of a forced mode:\n{help}"
    );
}

#[test]
fn display_paths_are_the_display_targets_modes() {
    // `--path` spells the modes as cuda-gl names them (its report line).
    assert_eq!(
        PathChoice::Interop.to_string(),
        cuda_gl::display::Mode::Interop.name()
    );
    assert_eq!(
        PathChoice::Staged.to_string(),
        cuda_gl::display::Mode::Staged.name()
    );
}

#[test]
fn stream_path_takes_a_burst_of_1_to_32() {
    let r = run(&["--path", "stream"]);
    assert_eq!((r.path, r.burst), (PathChoice::Stream, 8));
    assert_eq!(run(&["--path", "stream", "--burst", "16"]).burst, 16);
    for bad in ["0", "33", "x"] {
        assert!(
            Cli::try_parse_from(["plasma-demo", "--burst", bad]).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn size_parsing() {
    assert_eq!("1920x1080".parse(), Ok(Size::new(1920, 1080).unwrap()));
    assert_eq!(" 640X480 ".parse(), Ok(Size::new(640, 480).unwrap()));
    assert_eq!("1x1".parse(), Ok(Size::new(1, 1).unwrap()));
    for bad in [
        "",
        "1280",
        "1280*720",
        "x720",
        "1280x",
        "0x720",
        "1280x0",
        "-1x5",
        "1.5x2",
        "axb",
        "16385x1",
        "1x99999999999",
        "1280x720x3",
    ] {
        assert!(bad.parse::<Size>().is_err(), "`{bad}` parsed");
    }
    let err = "1280".parse::<Size>().unwrap_err();
    assert!(err.contains("WIDTHxHEIGHT"), "{err}");
    let err = "0x720".parse::<Size>().unwrap_err();
    assert!(err.contains("width 0 is out of range"), "{err}");
    let err = "12a0x720".parse::<Size>().unwrap_err();
    assert!(err.contains("width `12a0`"), "{err}");
}

#[test]
fn bad_size_is_a_usage_error() {
    let err = parse(&["--size", "1280-720"]).unwrap_err();
    assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    assert!(err.to_string().contains("WIDTHxHEIGHT"), "{err}");
}

#[test]
fn rejects_bad_values() {
    for args in [
        &["--frames", "0"][..],
        &["--frames", "-3"],
        &["--time", "nan"],
        &["--time", "inf"],
        &["--time", "soon"],
        &["--backend", "opencl"],
        &["--path", "texture"],
        &["--path", "Auto "],
        &["--path", "display"],
        &["--json"],
        &["--windowed"],
        &["--warmup", "5"],
        &["--headless", "--bench", "--windowed"],
    ] {
        assert!(parse(args).is_err(), "{args:?} parsed");
    }
}

#[test]
fn bench_is_headless_unless_windowed() {
    let r = run(&["--bench"]);
    assert_eq!(r.display(), Display::Headless);
    assert_eq!(r.frame_limit(), Some(DEFAULT_BENCH_FRAMES));
    assert_eq!(r.warmup, 100);
    let r = run(&[
        "--bench",
        "--windowed",
        "--json",
        "--warmup",
        "5",
        "--frames",
        "9",
    ]);
    assert_eq!(r.display(), Display::Window);
    assert_eq!(r.frame_limit(), Some(9));
    assert!(r.json);
    assert_eq!(r.warmup, 5);
    assert_eq!(
        run(&["--headless"]).frame_limit(),
        Some(DEFAULT_HEADLESS_FRAMES)
    );
}

#[test]
fn display_named_needs_a_non_empty_variable() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    };
    assert!(!display_named(env(&[])));
    assert!(!display_named(env(&[
        ("DISPLAY", ""),
        ("WAYLAND_DISPLAY", "")
    ])));
    assert!(!display_named(env(&[("XDG_SESSION_TYPE", "x11")])));
    assert!(display_named(env(&[("DISPLAY", ":0")])));
    assert!(display_named(env(&[("WAYLAND_DISPLAY", "wayland-0")])));
    assert!(display_named(env(&[
        ("DISPLAY", ""),
        ("WAYLAND_DISPLAY", "wayland-1")
    ])));
}

#[test]
fn plan_falls_back_to_headless_only_for_the_default_window() {
    // The first command of the README on a headless server: no display, no flags.
    assert_eq!(run(&[]).plan(false), Plan::NoDisplay);
    assert_eq!(run(&["--size", "640x360"]).plan(false), Plan::NoDisplay);
    // With a display, try the window, and fall back when GLFW cannot open it.
    assert_eq!(run(&[]).plan(true), Plan::Window { fallback: true });
    // Asked for headless: headless, display or not.
    for display in [false, true] {
        assert_eq!(run(&["--headless"]).plan(display), Plan::Headless);
        assert_eq!(run(&["--bench"]).plan(display), Plan::Headless);
    }
    // Asked for a window: a window or an error, never a silent fallback.
    for args in [&["--vsync"][..], &["--bench", "--windowed"]] {
        assert!(run(args).window_required());
        for display in [false, true] {
            assert_eq!(
                run(args).plan(display),
                Plan::Window { fallback: false },
                "{args:?}"
            );
        }
    }
}

#[test]
fn watchdog_flags() {
    let r = run(&[]);
    assert_eq!((r.watchdog_secs, r.debug_spin()), (None, None));
    let r = run(&[
        "--headless",
        "--watchdog-secs",
        "2",
        "--debug-spin-ms",
        "1500",
    ]);
    assert_eq!(r.watchdog_secs, Some(2));
    assert_eq!(r.debug_spin(), Some(std::time::Duration::from_millis(1500)));
    assert!(parse(&["--watchdog-secs", "-1"]).is_err());
    let help = Cli::command().render_long_help().to_string();
    assert!(help.contains("--watchdog-secs") && !help.contains("--debug-spin-ms"));
}

#[test]
fn subcommands() {
    let cli = parse(&[
        "reference",
        "--size",
        "320x180",
        "--time",
        "1.5",
        "--out",
        "r.png",
    ])
    .unwrap();
    match cli.command {
        Some(Command::Reference(r)) => {
            assert_eq!(r.size, Size::new(320, 180).unwrap());
            assert_eq!(r.time, 1.5);
            assert_eq!(r.out, PathBuf::from("r.png"));
        }
        other => panic!("{other:?}"),
    }
    match parse(&["compare", "a.png", "b.png", "--tolerance", "2"])
        .unwrap()
        .command
    {
        Some(Command::Compare(c)) => {
            assert_eq!((c.a, c.b, c.tolerance), ("a.png".into(), "b.png".into(), 2));
        }
        other => panic!("{other:?}"),
    }
    assert!(parse(&["reference"]).is_err(), "--out is required");
    assert!(parse(&["compare", "a.png"]).is_err());
    assert!(parse(&["compare", "a", "b", "--tolerance", "256"]).is_err());
    assert!(
        parse(&["--headless", "reference", "--out", "x.png"]).is_err(),
        "run flags do not mix with subcommands"
    );
}

#[test]
fn help_explains_every_flag() {
    let mut cmd = Cli::command();
    let help = cmd.render_long_help().to_string();
    for arg in Cli::command().get_arguments() {
        if let Some(long) = arg.get_long() {
            // Hidden flags (test hooks) are documented in the source only.
            assert!(
                arg.is_hide_set() || help.contains(&format!("--{long}")),
                "--{long} not in help"
            );
            assert!(
                arg.get_help().is_some() || arg.get_long_help().is_some(),
                "--{long} has no help text"
            );
        }
    }
}
