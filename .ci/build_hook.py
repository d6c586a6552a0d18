"""Builds miam-hook as README's install does, for the timing scripts:
linked statically, against musl where musl-gcc exists (glibc's static
start-up runs some twenty cpuid instructions, which a VM traps), else
against the system's static libc, else dynamically."""
import os, shutil, subprocess

STATIC = ["-ldflags", "-linkmode external -extldflags -static"]


def build_hook(root, out):
    tries = []
    if shutil.which("musl-gcc"):
        tries.append(("static, musl", STATIC, "musl-gcc"))
    tries += [("static, libc", STATIC, None), ("dynamic", [], None)]
    for what, flags, cc in tries:
        env = dict(os.environ, CC=cc) if cc else os.environ
        if subprocess.run(["go", "build", *flags, "-o", out, "./cmd/miam-hook"], cwd=root, env=env,
                          stderr=subprocess.DEVNULL).returncode == 0:
            print(f"miam-hook built {what}")
            return
    raise SystemExit("go build ./cmd/miam-hook failed")
