//! Buffers of zeros made from memory a render freed before, not from fresh
//! pages.
//!
//! `vec![0; n]` asks the allocator for zeroed memory, and jemalloc zeroes a
//! large extent it reuses by purging it (`madvise(MADV_DONTNEED)`, its
//! `ehooks_default_zero_impl`): each page of the buffer then faults on its
//! first write and the kernel clears it. Renders of a 12 MP JPEG spent 11 %
//! of the server's time so (perf: page faults and the purges). A buffer
//! allocated plainly and then filled keeps the pages it is given as they
//! are: the fill is a `memset` over memory already mapped.

/// `len` zeros (`T::default()`), allocated without asking for zeroed memory.
pub(super) fn zeroed<T: Copy + Default>(len: usize) -> Vec<T> {
    // Hidden from the optimiser, which would otherwise see an allocation
    // filled with zeros and make it one zeroed allocation again.
    let mut v = std::hint::black_box(Vec::with_capacity(len));
    v.resize(len, T::default());
    v
}

#[cfg(test)]
mod tests {
    use super::zeroed;

    #[test]
    fn its_buffers_are_zeros_of_the_length_asked() {
        // A freed buffer of ones first, so that memory reused is seen.
        drop(vec![1u8; 1 << 20]);
        let b: Vec<u8> = zeroed(1 << 20);
        assert_eq!(b.len(), 1 << 20);
        assert!(b.iter().all(|&x| x == 0));
        let w: Vec<i16> = zeroed(3);
        assert_eq!(w, [0, 0, 0]);
        assert!(zeroed::<u64>(0).is_empty());
    }
}
