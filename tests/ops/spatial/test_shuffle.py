"""PixelShuffle / PixelUnshuffle (a round trip, against numpy reshapes) and channel_shuffle."""
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import FLOAT_DTYPES, assert_close, make


def test_pixel_shuffle_round_trip():
    x, xr = make((2, 8, 3, 4), "float64", "transposed")
    ref = xr.reshape(2, 2, 2, 2, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 8)
    y = nn.PixelShuffle(2)(x)
    assert_close(y, ref)
    assert_close(nn.PixelUnshuffle(2)(y), xr)
    assert_close(F.pixel_shuffle(x[0], 2), ref[0])               # unbatched
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(tt.zeros(1, 3, 2, 2), 2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_channel_shuffle(dtype):
    x, xr = make((2, 6, 3, 2), dtype, "transposed", seed=8)
    ref = xr.reshape(2, 3, 2, 3, 2).swapaxes(1, 2).reshape(2, 6, 3, 2)
    assert_close(nn.ChannelShuffle(3)(x), ref, dtype)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(x, 4)
