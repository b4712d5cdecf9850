//! Plain data: the element types GL may read from and write into (buffers, texels).

/// A type of plain data: no padding, no pointers, and every bit pattern of its size is a valid
/// value, so GL may fill it with any bytes and read its bytes as they are.
///
/// # Safety
/// Implement it only for such types (the integers, the floats, and arrays of them).
pub unsafe trait Plain: Copy + Default + 'static {}

macro_rules! plain {
    ($($ty:ty),*) => {
        // SAFETY: the integer and float types have no padding and no invalid bit patterns.
        $(unsafe impl Plain for $ty {})*
    };
}
plain!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

// SAFETY: an array of plain values has no padding between them and no invalid bit pattern.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] where [T; N]: Default {}

/// The bytes of `values`, as GL reads them.
pub fn bytes_of<T: Plain>(values: &[T]) -> &[u8] {
    // SAFETY: `T` is plain (no padding, so every byte is initialised); the slice covers exactly
    // the memory of `values` and borrows it.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), size_of_val(values)) }
}

/// How many values of `T` hold `bytes` bytes exactly; `None` when `bytes` is not a multiple of
/// `T`'s size.
pub fn count_of<T: Plain>(bytes: usize) -> Option<usize> {
    let size = size_of::<T>().max(1);
    bytes.is_multiple_of(size).then_some(bytes / size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_counts() {
        assert_eq!(bytes_of(&[0x0403_0201u32]), 0x0403_0201u32.to_ne_bytes());
        assert_eq!(bytes_of::<[u8; 4]>(&[[1, 2, 3, 4], [5, 6, 7, 8]]).len(), 8);
        assert_eq!(count_of::<u32>(16), Some(4));
        assert_eq!(count_of::<[f32; 2]>(12), None);
    }
}
