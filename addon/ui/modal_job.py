"""The shape of Blender's long-running operators, shared by the bakes: blocking from scripts and
headless runs (``execute``), modal from the UI (``invoke``) with a progress bar, one step per timer
tick, ESC to cancel."""

from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager

import bpy

# Where a headless blocking job prints its progress line (None: sys.stdout).  The command line points
# it at the terminal while it keeps Blender's own report prints off the screen.
progress_stream = None


@contextmanager
def ctrl_c_pressed():
    """Ctrl-C as a flag the blocking loop reads between steps (a callable: pressed yet?), not as a
    KeyboardInterrupt: raised inside Python that Blender's C code calls (a property's getter or update, a
    handler), that exception is printed and dropped there, and a bake ran on to its end (seen once in a
    loaded test run).  A second Ctrl-C raises, for a step that never returns.  Off the main thread (where no
    signal handler can be set) Ctrl-C stays as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    pressed = []

    def on_ctrl_c(signum, frame):
        if pressed:  # the second press: stop at once, as Blender's own second Ctrl-C does
            raise KeyboardInterrupt
        pressed.append(signum)

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield lambda: bool(pressed)
    finally:
        signal.signal(signal.SIGINT, previous)


class ProgressLine:
    """``frame 12/48  34.1 frames/s  1.1 s left`` for a headless bake: rewritten in place on a terminal,
    a line each ``every`` frames (and at the last) otherwise."""

    def __init__(self, total: int, stream=None, every: int | None = None):
        self.total, self.stream = total, stream or sys.stdout
        self.tty = self.stream.isatty()
        self.every = every or max(1, total // 10)
        self.started = time.perf_counter()
        self.shown = 0

    def update(self, done: int) -> None:
        """Show ``done`` frames finished (on disk)."""
        if done == self.shown or not (self.tty or done >= self.shown + self.every or done == self.total):
            return
        self.shown = done
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        rate = done / elapsed
        left = (self.total - done) / rate if rate > 0 else float("inf")
        line = f"frame {done}/{self.total}  {rate:.1f} frames/s  {left:.1f} s left"
        self.stream.write(f"\r{line}\033[K" if self.tty else line + "\n")
        if self.tty and done == self.total:
            self.stream.write("\n")
        self.stream.flush()


class ModalJobOperator(bpy.types.Operator):
    """Base of operators that run a job: ``finished``, ``step()``, ``progress``, ``frames`` and ``close()``.

    Subclasses make the job (``make_job``, raising ``job_error`` with the reason) and report at the
    end (``_finish``)."""

    job_error: type = RuntimeError
    _job = None
    _timer = None

    def make_job(self, context):
        raise NotImplementedError

    def started(self) -> None:
        """Reports once the job exists (warnings before the first step)."""

    def _finish(self, cancelled=False) -> None:
        raise NotImplementedError

    def _start(self, context) -> bool:
        try:
            self._job = self.make_job(context)
        except self.job_error as error:
            self.report({"ERROR"}, str(error))
            return False
        self.started()
        return True

    def execute(self, context):
        """Blocking (headless, scripts, farm tasks); headless it prints a progress line, Ctrl-C cancels."""
        with ctrl_c_pressed() as pressed:
            if not self._start(context):
                return {"CANCELLED"}
            progress = ProgressLine(len(self._job.frames), progress_stream) if bpy.app.background else None
            interrupted = False
            try:
                while not self._job.finished and not pressed():
                    self._job.step()
                    if progress:
                        progress.update(self._job.frames_finished)
            except self.job_error as error:
                job, self._job = self._job, None  # its GPU buffers go now, while there is a context
                job.close(cancelled=True)
                self.report({"ERROR"}, str(error))
                return {"CANCELLED"}
            except KeyboardInterrupt:  # a second Ctrl-C, or Ctrl-C off the main thread
                interrupted = True
            cancelled = interrupted or pressed()
            self._finish(cancelled)  # cancelled or not, the frames drawn land
            return {"CANCELLED"} if cancelled else {"FINISHED"}

    def invoke(self, context, event):
        """Interactive: one step per timer tick, progress bar, ESC cancels (what was written stays)."""
        if not self._start(context):
            return {"CANCELLED"}
        wm = context.window_manager
        wm.progress_begin(0, len(self._job.frames))
        self._timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            return self._end_modal(context, cancelled=True)
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            self._job.step()
        except self.job_error as error:
            self.report({"ERROR"}, str(error))
            return self._end_modal(context, cancelled=True)
        context.window_manager.progress_update(self._job.progress)
        return self._end_modal(context) if self._job.finished else {"RUNNING_MODAL"}

    def _end_modal(self, context, cancelled=False):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        self._finish(cancelled)
        return {"CANCELLED"} if cancelled else {"FINISHED"}
