//! Crate docs.

use std::fmt;

/// A point.
/// With two coordinates.
pub struct Point {
    x: i32, // abscissa
    y: i32,
}

impl Point {
    /** Builds a point. */
    pub fn new(x: i32, y: i32) -> Self {
        // plain comment
        Point { x, y }
    }
}

/* block
   comment */
fn text() -> &'static str {
    r"raw
string"
}

#[test]
fn new_works() {
    assert_eq!(Point::new(1, 2).x, 1);
}
