from tinytorch.nn.modules.activation import (  # noqa: F401
    ELU, GELU, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, SiLU, Sigmoid, Softmax,
    Softplus, Tanh,
)
from tinytorch.nn.modules.attention import MultiheadAttention  # noqa: F401
from tinytorch.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from tinytorch.nn.modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d  # noqa: F401
from tinytorch.nn.modules.linear import Bilinear, Identity, Linear  # noqa: F401
from tinytorch.nn.modules.loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss,
    NLLLoss, SmoothL1Loss,
)
from tinytorch.nn.modules.misc import Dropout, Embedding, Flatten, Unflatten  # noqa: F401
from tinytorch.nn.modules.module import Module  # noqa: F401
from tinytorch.nn.modules.normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm,
)
from tinytorch.nn.modules.pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d,
)
from tinytorch.nn.modules.transformer import (  # noqa: F401
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from tinytorch.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from tinytorch.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell  # noqa: F401
from tinytorch.nn.modules.activation import CELU, GLU, PReLU, SELU, Softsign, Tanhshrink, Threshold  # noqa: F401
from tinytorch.nn.modules.misc import (  # noqa: F401
    CosineSimilarity, Dropout1d, Dropout2d, PairwiseDistance, PixelShuffle, PixelUnshuffle,
)
from tinytorch.nn.modules.normalization import InstanceNorm1d, InstanceNorm2d  # noqa: F401
from tinytorch.nn.modules.padding import (  # noqa: F401
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from tinytorch.nn.modules.loss import (  # noqa: F401
    GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss,
    SoftMarginLoss, TripletMarginLoss,
)
from tinytorch.nn.modules.pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d  # noqa: F401
from tinytorch.nn.modules.activation import Hardshrink, Hardsigmoid, Softmin, Softshrink  # noqa: F401
from tinytorch.nn.modules.misc import Fold, Unfold  # noqa: F401
from tinytorch.nn.modules.quantized import QuantizedLinear  # noqa: F401
from tinytorch.nn.modules.bitlinear import BitLinear, PackedBitLinear  # noqa: F401
from tinytorch.nn.modules.activation import RReLU, Softmax2d  # noqa: F401
from tinytorch.nn.modules.pooling import LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d  # noqa: F401
from tinytorch.nn.modules.misc import AlphaDropout, ChannelShuffle, FeatureAlphaDropout  # noqa: F401
from tinytorch.nn.modules.normalization import LocalResponseNorm  # noqa: F401
from tinytorch.nn.modules.loss import (  # noqa: F401
    CTCLoss, MultiLabelMarginLoss, NLLLoss2d, TripletMarginWithDistanceLoss,
)
from tinytorch.nn.modules.pooling import AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d  # noqa: F401
from tinytorch.nn.modules.normalization import BatchNorm3d, InstanceNorm3d  # noqa: F401
from tinytorch.nn.modules.misc import Dropout3d  # noqa: F401
from tinytorch.nn.modules.conv import Conv3d, ConvTranspose3d  # noqa: F401
from tinytorch.nn.modules.embedding_bag import EmbeddingBag  # noqa: F401
from tinytorch.nn.modules.linear import LazyLinear  # noqa: F401
from tinytorch.nn.modules.conv import (  # noqa: F401
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
)
from tinytorch.nn.modules.lazy_norm import (  # noqa: F401
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from tinytorch.nn.modules.sync_batchnorm import SyncBatchNorm  # noqa: F401
from tinytorch.nn.modules.rnn import RNNCellBase  # noqa: F401
from tinytorch.nn.modules.container import Container  # noqa: F401
from tinytorch.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from tinytorch.nn.modules.normalization import CrossMapLRN2d  # noqa: F401
from tinytorch.nn.modules.loss import LinearCrossEntropyLoss  # noqa: F401
from tinytorch.nn.modules.pooling import FractionalMaxPool2d, FractionalMaxPool3d, LPPool3d, MaxUnpool3d  # noqa: F401
from tinytorch.nn.modules import adaptive, batchnorm, instancenorm, lazy  # noqa: F401  (PyTorch's module paths)

# Docstrings: PyTorch's summaries and an Args section per module, from tables (nn/_docstrings.py)
from tinytorch.nn._docstrings import document_modules as _document_modules  # noqa: E402

_document_modules(globals(), Module)
