"""Run every benchmark module's `main()` in turn, so `make bench` picks up new ones unasked."""

import importlib
import pkgutil

import benchmarks


def main() -> None:
    for module_info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"benchmarks.{module_info.name}")
        run = getattr(module, "main", None)
        if callable(run):
            print(f"== benchmarks.{module_info.name}")
            run()


if __name__ == "__main__":
    main()
