import React from 'react';

/** Shows a greeting. */
export function Hello({ name }: { name: string }) {
  // render
  return (
    <div className="hello">
      {/* a JSX comment */}
      Hello, {name}!
    </div>
  );
}

it('renders', () => {
  render(<Hello name="x" />);
});
