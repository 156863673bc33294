"""A stand-in for the ``blender`` executable where only the bpy module is installed (this project's
test machines): runs the command lines the farm job types emit (Flamenco's and the Open Job
Description template's), the way a worker's Blender would.

    python local_blender.py [-b] [-y] FILE.blend [--python-exit-code N] --python-expr EXPR ... [-- ARGS]

Like a Blender with the extension installed and enabled: the add-on is registered, the file is
opened, each expression runs in order; an exception exits with the --python-exit-code status.
As in Blender, what follows ``--`` is left to the scripts, which find it in ``sys.argv``.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    blendfile, expressions, exit_code = None, [], 1
    args = iter(argv)
    for arg in args:
        if arg == "--":
            break
        if arg in ("-b", "--background", "-y", "--enable-autoexec"):
            continue
        if arg == "--python-exit-code":
            exit_code = int(next(args))
        elif arg == "--python-expr":
            expressions.append(next(args))
        elif arg.endswith(".blend") and blendfile is None:
            blendfile = arg
        else:
            print(f"local_blender: unsupported argument {arg!r}", file=sys.stderr)
            return 2
    sys.argv = [sys.argv[0], *argv]  # Blender's sys.argv holds its whole command line
    sys.path.insert(0, str(ROOT))
    import bpy

    import addon

    addon.register()
    if blendfile:
        bpy.ops.wm.open_mainfile(filepath=blendfile)
    for expression in expressions:
        try:
            exec(compile(expression, "<python-expr>", "exec"), {"__name__": "__main__"})
        except Exception:  # noqa: BLE001  (Blender prints the traceback and exits with --python-exit-code)
            traceback.print_exc()
            return exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
