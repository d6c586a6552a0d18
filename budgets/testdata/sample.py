"""Module docstring.

Spans three lines."""

import os  # trailing comment keeps the line code

# A plain comment.


class Greeter:
    """Greets people."""

    def greet(self, name):
        """Return a greeting.

        The name is used verbatim.
        """
        # comment inside a body
        message = f"""Hello,
{name}!"""
        return message


def test_greet():
    assert Greeter().greet("x")
