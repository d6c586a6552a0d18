#!/usr/bin/env bash
# Greets the user.

set -euo pipefail

# Prints a greeting.
greet() {
  local name="$1" # trailing
  echo "hello, $name"
}

cat <<EOT
heredoc line
EOT

greet "world"
