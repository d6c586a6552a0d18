/** A point in the plane. */
interface Point {
  x: number; // abscissa
  y: number;
}

// Distance between two points.
export function dist(a: Point, b: Point): number {
  /* squared */
  const dx = a.x - b.x;
  const dy = a.y - b.y;
  return Math.sqrt(dx * dx + dy * dy);
}

type Pair = [Point, Point];

test('dist is zero for equal points', () => {
  expect(dist({ x: 1, y: 1 }, { x: 1, y: 1 })).toBe(0);
});
