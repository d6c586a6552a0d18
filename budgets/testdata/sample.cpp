#include <string>

namespace demo {

/// A greeter.
class Greeter {
 public:
  // plain comment
  std::string greet(const std::string& name) const;
};

/** Greets. */
std::string Greeter::greet(const std::string& name) const {
  /* block */
  return R"(hello,
)" + name;
}

}  // namespace demo
