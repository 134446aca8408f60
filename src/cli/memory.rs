//! Memory the system refuses is an error, not an abort: the binary's allocator is the system's,
//! and when an allocation fails (under `ulimit -v` or `prlimit --as`, or on a machine that
//! overcommits no further) it prints one `error:` line naming the size and exits with status
//! 1, as every other refusal does, instead of Rust's default abort (status 134, a core dump).
//! Most loads never get here: `runlog::limits` counts the address-space limit in the memory a
//! load may use and refuses a larger input by name first.

use std::alloc::{GlobalAlloc, Layout, System};

pub struct ErrorOnFailure;

// SAFETY: every call is forwarded to the system allocator unchanged; only a null result
// (a failure) is handled, and then the process ends.
unsafe impl GlobalAlloc for ErrorOnFailure {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            refused(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            refused(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            refused(new_size);
        }
        p
    }
}

/// Say so and end: nothing here may allocate. Temporary files are not removed (that would
/// take a lock the failing allocation may hold); an export's temporary file is renamed into
/// place only when complete, so no partial output is ever left under the user's name.
fn refused(size: usize) -> ! {
    let mut line = [0u8; 256];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if len < line.len() {
                line[len] = b;
                len += 1;
            }
        }
    };
    put(b"error: out of memory: the system refused ");
    let mut digits = [0u8; 20];
    let mut n = size;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    put(&digits[i..]);
    put(
        b" bytes (an address-space limit such as ulimit -v?); raise the limit, or split the \
          log\n",
    );
    // SAFETY: write(2) and _exit(2) are async-signal-safe and allocate nothing.
    unsafe {
        libc::write(2, line.as_ptr().cast(), len);
        libc::_exit(1);
    }
}
