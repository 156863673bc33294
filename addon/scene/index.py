"""Which of a scene's objects play a part for the particles, sorted out once per edit instead of every draw.

A viewport draw asked every object of the scene, each draw, whether it is an emitter, a force field, a
collider, a CSG primitive or an occluder, which made a scene of many objects slow to draw (measured:
``bench/results/nvidia-h100-80gb-hbm3-pcie-sse2-2026-11-25-viewport-occluder.json``).  An object changes part only through an edit, which the viewport's
handlers report (depsgraph update, undo, redo: :func:`scene_edited`), or through its animation (an
animated visibility, an effect switched on by a key).  So :class:`SceneIndex` keeps, per test, the objects
that passed it at the last edit, and asks again each time only the objects with animation data.

Only the viewport uses it: Blender evaluates (and reports) every edit before it redraws.  A bake reads the
whole scene each frame, since a script may edit the scene and bake without an evaluation in between.
"""

from __future__ import annotations

_edits = 0  # edits reported so far: what was kept before the last one is worked out again


def scene_edited(*args) -> None:
    """A handler (depsgraph update, undo, redo): any object may have changed, kept answers are stale."""
    global _edits
    _edits += 1


def edits() -> int:
    return _edits


def changes_over_time(obj) -> bool:
    """Geometry that can differ from frame to frame without an edit: modifiers (armatures, physics,
    geometry nodes, ...; Collision alone changes nothing), shape keys, animated or driven mesh data."""
    original = obj.original
    return (any(modifier.type != "COLLISION" for modifier in original.modifiers)
            or original.data.shape_keys is not None or original.data.animation_data is not None)


class SceneIndex:
    """Per test (a predicate of an object), the scene's objects that pass it, in the scene's order, with their
    places in ``scene.objects``: worked out after each edit, animated objects asked again at each call."""

    def __init__(self):
        self._key = None  # (edits, scene) the kept answers are for
        self._answers = {}  # test -> _Answer

    def indexed(self, scene, test) -> list[tuple[int, object]]:
        """(place in ``scene.objects``, object) of every object that passes ``test`` now: the same list as
        the last call's when no answer changed."""
        key = (_edits, scene.as_pointer())  # (an object added or removed is an edit)
        if key != self._key:
            self._key, self._answers = key, {}
        answer = self._answers.get(test)
        if answer is None:
            answer = self._answers[test] = _Answer(scene.objects, test)
        return answer.now(test)

    def objects(self, scene, test) -> list:
        """The objects of :meth:`indexed`."""
        return [obj for _, obj in self.indexed(scene, test)]


class _Answer:
    """The objects that passed a test at the last edit, and those with animation data, asked at each call."""

    def __init__(self, objects, test):
        self.candidates = [(place, obj) for place, obj in enumerate(objects)
                           if obj.animation_data is not None or test(obj)]
        self.animated = [i for i, (_, obj) in enumerate(self.candidates) if obj.animation_data is not None]
        self._last = None  # (the animated objects' answers, the list they gave)

    def now(self, test) -> list[tuple[int, object]]:
        answers = tuple(test(self.candidates[i][1]) for i in self.animated)
        if self._last is None or self._last[0] != answers:
            failed = {i for i, passed in zip(self.animated, answers) if not passed}
            self._last = (answers, [c for i, c in enumerate(self.candidates) if i not in failed])
        return self._last[1]
