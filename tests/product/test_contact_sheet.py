"""The contact sheet tool: tiles land in their cells, converted from linear to display sRGB, labelled, saved as
JPEG."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import contact_sheet  # noqa: E402


def test_tiles_are_placed_converted_and_labelled(host):
    tile = (40, 20)
    red = np.zeros((20, 40, 4), np.float32)
    red[..., 0], red[..., 3] = 0.214, 1.0  # linear 0.214 is sRGB ~0.5
    black = np.zeros_like(red)
    sheet = contact_sheet.compose([("Red", red), ("Black", black), ("Third", black)], columns=2, tile=tile)
    cell_h = tile[1] + contact_sheet.LABEL_HEIGHT
    assert sheet.shape == (2 * cell_h, 80, 4)
    top_row = sheet[cell_h:]  # rows run bottom to top: the first tiles are the upper row
    red_cell = top_row[: tile[1], :40]
    assert abs(int(np.median(red_cell[..., 0])) - 128) <= 3 and red_cell[..., 1].max() <= 6
    assert red_cell.shape[0] == 20 and top_row[: tile[1], 40:, 0].max() <= 6
    label = top_row[tile[1]:, :40, :3]
    assert label.max() > 150, "the label is drawn above its tile"


def test_the_crop_is_the_window_with_the_most_light():
    pixels = np.zeros((108, 192, 4), np.float32)
    pixels[70:80, 150:160, :3] = 1.0  # the bright patch
    pixels[5, 5, :3] = 3.0  # a lone brighter pixel elsewhere holds less light
    x, y = contact_sheet.brightest_window(pixels, (48, 27))
    assert x <= 150 and x + 48 >= 160 and y <= 70 and y + 27 >= 80
    assert contact_sheet.crop(pixels, (48, 27)).shape == (27, 48, 4)


def test_a_stage_can_centre_the_crop():
    pixels = np.zeros((108, 192, 4), np.float32)
    pixels[100, 20, 0] = 1.0  # near the top left (rows run bottom to top)
    window = contact_sheet.crop(pixels, (48, 27), center=(0.1, 0.05))
    assert window.shape == (27, 48, 4) and window[..., 0].sum() == 1.0
    assert contact_sheet.crop(pixels, (48, 27), center=(1.0, 1.0)).shape == (27, 48, 4), "kept inside the frame"


def test_update_replaces_only_the_named_cells(host, tmp_path):
    import pytest

    w, h = contact_sheet.TILE
    red, green, blue, white = (np.zeros((h, w, 4), np.float32) for _ in range(4))
    for tile, channel in ((red, 0), (green, 1), (blue, 2)):
        tile[..., channel], tile[..., 3] = 0.5, 1.0
    white[...] = 1.0
    path = tmp_path / "sheet.jpg"
    contact_sheet.save_sheet(contact_sheet.compose([("A", red), ("B", green), ("C", blue)], columns=4), path)
    assert path.read_bytes()[:3] == b"\xff\xd8\xff", "a JPEG file"
    contact_sheet.update_sheet(path, ["a", "b", "c"], [("b", "New B", white)])
    wanted = contact_sheet.compose([("A", red), ("New B", white), ("C", blue)], columns=4)
    error = np.abs(contact_sheet.load_sheet(path)[..., :3].astype(int) - wanted[..., :3])
    assert np.median(error) <= 2 and np.percentile(error, 99) <= 40, "within the JPEG's loss"
    cell = np.s_[:, w:2 * w]  # B's column: white where it was green
    assert error[cell].mean() < 4 and contact_sheet.load_sheet(path)[cell][..., 0].mean() > 200
    with pytest.raises(SystemExit, match="render the whole sheet"):  # five presets need two rows
        contact_sheet.update_sheet(path, ["a", "b", "c", "d", "e"], [("b", "B", white)])
