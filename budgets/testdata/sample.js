/**
 * Adds two numbers.
 */
function add(a, b) {
  // plain comment
  return a + b; // trailing
}

/* block comment */
const greet = (name) => `Hello,
${name}!`;

class Counter {
  /** Increments. */
  inc() {
    this.n++;
  }
}

describe('add', () => {
  it('adds numbers', () => {
    expect(add(1, 2)).toBe(3);
  });
});
