"""RowBuffers (engine/seam/row_buffers.py): host memory a writer gives back is read into again, across new
textures, while it holds the read."""

from addon.engine.seam.row_buffers import RowBuffers


def test_memory_given_back_is_read_into_again_after_new_textures_while_it_holds_the_read(host):
    narrow, wide = (host.texture(name, width, 4, "R32UI") for name, width in (("narrow", 16), ("wide", 64)))
    memory = RowBuffers(host, (narrow,))
    (small,), give_back = memory.take()
    give_back()
    assert memory.read_into((wide,)) is memory
    (kept,), give_back = memory.take([1])  # a row of the wide texture: 64 texels, as many as the buffer holds
    assert kept is small
    give_back()
    (grown,), _ = memory.take([2])  # 128 texels: more than it holds
    assert grown is not small and grown.array.size == 4 * 64


def test_nothing_given_back_takes_new_memory_and_giving_back_twice_gives_once(host):
    texture = host.texture("rows", 8, 2, "RGBA32F")
    memory = RowBuffers(host, (texture,))
    (first,), give_back = memory.take()
    (second,), _ = memory.take()
    assert first is not second and first.array.size == 8 * 2 * 4
    give_back()
    give_back()
    (again,), _ = memory.take()
    (fresh,), _ = memory.take()
    assert again is first and fresh is not first
