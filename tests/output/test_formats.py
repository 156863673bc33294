"""The output formats' registry: every kind the bake offers satisfies FrameFormat, and writes a file that
OpenImageIO reads back as that kind, whole, under the kind's extension."""

import inspect
import pickle

import numpy as np
import pytest

from addon.engine.draw.readback import ReadbackLayout
from addon.output.display import image_modules
from addon.output.formats import KINDS, FrameFormat, file_extension, frame_format, supported_formats
from tests.output.test_frame_writer import HEIGHT, WIDTH, sample_frame, write_frame

# Blender's names that the bake writes, and what OpenImageIO calls the file it reads back
FILE_KINDS = {"PNG": "png", "OPEN_EXR": "openexr", "OPEN_EXR_MULTILAYER": "openexr"}


def test_the_registry_is_keyed_by_blenders_file_formats():
    assert set(KINDS) == set(FILE_KINDS)
    assert supported_formats() == "PNG or OpenEXR"
    assert [file_extension(name) for name in ("PNG", "OPEN_EXR", "JPEG")] == [".png", ".exr", ".png"]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_satisfies_the_interface(name):
    kind = KINDS[name]
    assert issubclass(kind, FrameFormat) and not inspect.isabstract(kind)
    assert kind.label and kind.extension.startswith(".")


@pytest.mark.parametrize("name", sorted(set(KINDS) & {"PNG", "OPEN_EXR"}))  # those Blender 5.2's enum has
def test_each_kind_writes_a_readable_file_of_its_kind(scene, host, tmp_path, rng, name):
    scene.render.image_settings.file_format = name
    kind = frame_format(scene)
    assert isinstance(kind, KINDS[name]) and pickle.loads(pickle.dumps(kind)) == kind  # for writer processes
    assert isinstance(kind.readback, ReadbackLayout) and isinstance(kind.attributes(), dict)
    path = tmp_path / f"frame{kind.extension}"
    encoded = write_frame(kind, sample_frame(rng), path, host)
    assert np.any(encoded)
    oiio, _ = image_modules()
    image = oiio.ImageInput.open(str(path))
    try:
        assert image.format_name() == FILE_KINDS[name]
        spec = image.spec()
        assert (spec.width, spec.height) == (WIDTH, HEIGHT) and str(spec.format) == kind.depth
        np.testing.assert_array_equal(image.read_image(kind.depth), encoded)
    finally:
        image.close()
