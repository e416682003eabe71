//! A list that grows without ever copying itself: the entries of a large compiled map.

use std::ops::Index;

/// Items a [`Chunked`] holds in its first, growing vector; past them, items fill chunks of
/// this size (a power of two: finding an item is a shift and a mask).
const CHUNK: usize = 4096;

/// A list built by pushing, for lists that may grow large (a compiled map's entries).
///
/// Up to 4,096 items it is one vector that grows as usual; past them, items fill
/// chunks of that size. A `Vec` reallocates as it grows, holding the old and the new copy
/// at once, and ends with up to half of its room unused; this list never copies an item and
/// its chunks are full but for the last, so a list of a million entries costs its items and
/// little more at any moment.
#[derive(Debug, Clone)]
pub struct Chunked<T> {
    /// Full chunks of `CHUNK` items, in order.
    full: Vec<Box<[T]>>,
    /// The items after the full chunks.
    last: Vec<T>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked::new()
    }
}

impl<T> Chunked<T> {
    /// An empty list.
    pub const fn new() -> Chunked<T> {
        Chunked {
            full: Vec::new(),
            last: Vec::new(),
        }
    }

    /// Appends `item`.
    pub fn push(&mut self, item: T) {
        if self.last.len() == CHUNK {
            let chunk = std::mem::replace(&mut self.last, Vec::with_capacity(CHUNK));
            self.full.push(chunk.into_boxed_slice());
        }
        self.last.push(item);
    }

    /// How many items there are.
    pub fn len(&self) -> usize {
        self.full.len() * CHUNK + self.last.len()
    }

    /// True when there is no item.
    pub fn is_empty(&self) -> bool {
        self.full.is_empty() && self.last.is_empty()
    }

    /// Item `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&T> {
        match self.full.get(index / CHUNK) {
            Some(chunk) => Some(&chunk[index % CHUNK]),
            None => self.last.get(index - self.full.len() * CHUNK),
        }
    }

    /// The items in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.full
            .iter()
            .flat_map(|chunk| chunk.iter())
            .chain(self.last.iter())
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(item) => item,
            None => panic!("index {index} out of a list of {}", self.len()),
        }
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Chunked<T> {
        let mut list = Chunked::new();
        items.into_iter().for_each(|item| list.push(item));
        list
    }
}

impl<T> IntoIterator for Chunked<T> {
    type Item = T;
    type IntoIter =
        std::iter::Chain<std::iter::Flatten<std::vec::IntoIter<Box<[T]>>>, std::vec::IntoIter<T>>;

    /// The items in order; each chunk is freed once its items are taken.
    fn into_iter(self) -> Self::IntoIter {
        self.full.into_iter().flatten().chain(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_past_several_chunks_keeps_its_order_and_finds_every_item() {
        let n = CHUNK * 3 + 17;
        let list: Chunked<usize> = (0..n).collect();
        assert_eq!(list.len(), n);
        assert_eq!(list.full.len(), 3);
        assert!(list.full.iter().all(|chunk| chunk.len() == CHUNK));
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1] {
            assert_eq!(list[i], i);
            assert_eq!(list.get(i), Some(&i));
        }
        assert_eq!(list.get(n), None);
        assert!(list.iter().copied().eq(0..n));
        assert!(list.iter().rev().copied().eq((0..n).rev()));
        assert!(list.clone().into_iter().eq(0..n));
    }

    #[test]
    fn a_small_list_is_one_vector() {
        let list: Chunked<&str> = ["a", "b"].into_iter().collect();
        assert_eq!(list.len(), 2);
        assert!(list.full.is_empty());
        assert!(!list.is_empty() && Chunked::<u8>::new().is_empty());
        assert_eq!(list.into_iter().collect::<Vec<_>>(), ["a", "b"]);
        let big: Chunked<usize> = (0..CHUNK + 1).collect();
        assert_eq!(big.full.len(), 1);
        assert_eq!(big[CHUNK], CHUNK);
    }
}
