"""The contact sheet tool: tiles land in their cells, converted from linear to display sRGB, labelled."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

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
