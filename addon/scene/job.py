"""A job over scene frames, the shape the bakes share: ``ModalJobOperator`` (ui/modal_job.py) runs one
blocking or modal, step by step."""

from __future__ import annotations


class FrameJob:
    """A job over ``frames`` (``done`` of them so far) whose first steps may run a long ``preroll``."""

    frames: list
    done: int

    @property
    def finished(self) -> bool:
        return self.done >= len(self.frames)

    @property
    def progress(self) -> float:
        return self.preroll.progress_of(self.done)

    @property
    def frames_finished(self) -> int:
        """Frames the progress line counts as done (a bake counts those on disk)."""
        return self.done
