//! Where each parameter block sits in a model's unconstrained vector, built block by block in
//! the order the model lists them (one builder for every model's layout), and the writer of
//! its reported quantities.

/// Hands out the coordinates of an unconstrained vector block by block, in order.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Coords {
    next: usize,
}

impl Coords {
    /// A layout whose first `len` coordinates are taken already.
    pub(crate) fn after(len: usize) -> Self {
        Self { next: len }
    }

    /// The next `len` coordinates; returns the first of them (where an empty block would be).
    pub(crate) fn block(&mut self, len: usize) -> usize {
        let at = self.next;
        self.next += len;
        at
    }

    /// One coordinate when `present`.
    pub(crate) fn optional(&mut self, present: bool) -> Option<usize> {
        present.then(|| self.block(1))
    }

    /// The dimension so far.
    pub(crate) fn dim(&self) -> usize {
        self.next
    }
}

/// Writes a model's reported quantities one after another into its output row.
pub(crate) struct Writer<'a> {
    out: &'a mut [f64],
    next: usize,
}

impl<'a> Writer<'a> {
    /// Writing from the start of `out`.
    pub(crate) fn new(out: &'a mut [f64]) -> Self {
        Self { out, next: 0 }
    }

    /// Writes the next quantity.
    pub(crate) fn put(&mut self, v: f64) {
        self.out[self.next] = v;
        self.next += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_follow_each_other_and_absent_ones_take_nothing() {
        let mut c = Coords::after(2);
        assert_eq!(c.block(3), 2);
        assert_eq!(c.optional(false), None);
        assert_eq!(c.optional(true), Some(5));
        assert_eq!(c.block(0), 6);
        assert_eq!(c.block(4), 6);
        assert_eq!(c.dim(), 10);
        let mut out = [0.0; 3];
        let mut w = Writer::new(&mut out);
        w.put(1.0);
        w.put(2.0);
        assert_eq!(out, [1.0, 2.0, 0.0]);
    }
}
