# frozen_string_literal: true

# A greeter.
# Says hello.
class Greeter
  # Returns a greeting.
  def greet(name)
    # plain comment
    "Hello, #{name}" # trailing
  end

  def poem
    <<~TEXT
      roses
    TEXT
  end
end

=begin
block comment
=end

def test_greet
  assert_equal "Hello, x", Greeter.new.greet("x")
end
