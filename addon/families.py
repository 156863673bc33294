"""Sub-emitter families in a Blender file: a spawned effect refers to its parent, it does not name it.

The reference is the parent's object (``spawn_object``, a pointer: Blender keeps it through renames and, when
Shift+D copies the object, points the copy's at the copy) and the parent effect's ``uid`` (``spawn_effect``: kept
through renames, copied with the object).  So renaming either keeps the family, and a copied emitter's children
spawn from the copy's effects.  The engine still takes "Object/Effect" names (events.family_parents): the
``spawn_from`` property reads the reference as the names they have now.  A name with no reference yet (a file
saved before references, a name set before its parent exists) is kept as the ID property ``spawn_from`` and
read as it is until :func:`link_named` finds its parent (on load, and whenever it is set).
"""

from __future__ import annotations

import uuid

import bpy

PENDING = "spawn_from"  # the ID property of a parent named but not linked (what files before references stored)


def parent_of(effect):
    """(object, effect) the effect spawns from, or None (emitted, or its parent is gone)."""
    obj, uid = effect.spawn_object, effect.spawn_effect
    if obj is None or not uid:
        return None
    return next(((obj, parent) for parent in obj.gpu_particles.effects if parent.uid == uid), None)


def link(child, obj, parent) -> None:
    """``child`` spawns from ``parent`` on ``obj`` from now on, whatever either is called."""
    if not parent.uid:
        parent.uid = uuid.uuid4().hex
    child.spawn_object = obj
    child.spawn_effect = parent.uid
    if PENDING in child:
        del child[PENDING]


def unlink(child) -> None:
    """``child`` is emitted from its own object again."""
    child.spawn_object = None
    child.spawn_effect = ""
    if PENDING in child:
        del child[PENDING]


def spawn_from_name(effect) -> str:
    """The parent as 'Object/Effect' with the names they have now: what the engine resolves (a reference whose
    object or effect was deleted reads as a name no effect has, so the effect is refused with a warning)."""
    found = parent_of(effect)
    if found is not None:
        return f"{found[0].name}/{found[1].name}"
    obj = effect.spawn_object
    if effect.spawn_effect:
        return f"{obj.name}/(deleted effect)" if obj is not None else "(deleted object)"
    if obj is not None:
        return f"{obj.name}/(no effect picked)"
    return str(effect.get(PENDING, ""))


def set_spawn_from(effect, name: str) -> None:
    """Spawn from the effect called ``name`` ('Object/Effect', or an effect name: on this object first, else the
    one effect of that name in the file), linked now when it is found, else kept as a name until it is."""
    unlink(effect)
    if name:
        effect[PENDING] = name
        link_named(effect.id_data, effect)


def link_named(owner, effect) -> bool:
    """Link ``effect`` (on ``owner``) to the parent its pending name finds; False, the name kept, where none or
    several effects answer to it."""
    name = effect.get(PENDING)
    if not name:
        return False
    found = find_effect(owner, str(name), exclude=effect)
    if found is None:
        return False
    link(effect, *found)
    return True


def find_effect(owner, name: str, exclude=None):
    """(object, effect) called ``name``: 'Object/Effect' (object names may hold '/': every split is tried), or an
    effect name on ``owner``, else on exactly one object of the file; None when there is none or no single one."""
    for cut in (i for i, c in enumerate(name) if c == "/"):
        obj = bpy.data.objects.get(name[:cut])
        found = _named(obj, name[cut + 1:], exclude) if obj is not None else []
        if len(found) == 1:
            return obj, found[0]
    own = _named(owner, name, exclude)
    if own:
        return (owner, own[0]) if len(own) == 1 else None
    found = [(obj, effect) for obj in bpy.data.objects if obj != owner for effect in _named(obj, name, exclude)]
    return found[0] if len(found) == 1 else None


def _named(obj, name: str, exclude) -> list:
    return [effect for effect in obj.gpu_particles.effects if effect.name == name and effect != exclude]


def descendants(obj, effect) -> list[tuple[object, object, object]]:
    """(object, effect, its parent effect) of every effect spawned from ``effect`` on ``obj``, its children's
    children after them, parents first (a user preset saves the family)."""
    family, queue, seen = [], [effect], {effect.as_pointer()}
    while queue:
        parent = queue.pop(0)
        for other in bpy.data.objects:
            for child in other.gpu_particles.effects:
                found = parent_of(child)
                if found is not None and found[1] == parent and child.as_pointer() not in seen:  # (a cycle)
                    family.append((other, child, parent))
                    queue.append(child)
                    seen.add(child.as_pointer())
    return family


@bpy.app.handlers.persistent
def link_loaded(*args) -> None:
    """A loaded file's effects that name their parent (saved before references): linked where the name finds it."""
    for obj in bpy.data.objects:
        for effect in obj.gpu_particles.effects:
            link_named(obj, effect)
