"""The row types of the op schema (`ops.py`). A row says everything about one op that would
otherwise be written by hand in several places; `generate.py` turns the rows into code.

Formulas are Python expressions over the names `grad`, the op's inputs (`input`, `other`),
`result`, and the op's scalar parameters by name; they are pasted into the family's Cython module,
so they may call any function defined there."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

# dtype classes of the elementwise kernels (C++ `UnaryClass` / `BinaryClass`)
UNARY_CLASSES = {
    "floating": "Floating",     # integer inputs compute in float32
    "float_only": "FloatOnly",  # floating inputs only: integer and bool raise (activations, as PyTorch)
    "integral": "Integral",     # integer inputs keep their dtype (bool rejected)
    "predicate": "Predicate",   # any dtype in, bool out
}
BINARY_CLASSES = {
    "arith": "Arith",           # integers keep their dtype; bool rejected
    "arith_bool": "ArithBool",  # as arith, and bool works (or/and/max/min on 0/1)
    "true_divide": "TrueDivide",  # integers divide in float32
    "floating": "Floating",     # integer inputs compute in float32 (atan2, fused backwards)
    "compare": "Compare",       # bool out
    "logical": "Logical",       # any dtype in, bool out
    "bitwise": "Bitwise",       # integers and bool only
}
AUTOCAST = (None, "lower", "fp32")


@dataclass
class Unary:
    """A unary kernel op: one `UnaryOp` case in C++ (formula in tinytorch/math.h)."""
    name: str
    dtypes: str = "floating"
    params: tuple = ()                  # ("beta=1.0", "threshold=20.0"): kernel scalars a, b
    grad: Optional[str] = None          # d/d input, as an expression; None: no gradient
    fused: Optional[str] = None         # "gelu_backward(input)": a binary backward kernel used
                                        # outside create_graph; tested equal to `grad`
    grad_fn: Optional[str] = None       # PyTorch's node name, default <Name>Backward0
    public: object = True               # True: tinytorch.<name> and Tensor.<name>; "F": a function in
                                        # the family module only (nn.functional's); False: kernel only
    inplace: bool = False               # generate <name>_ (as a method where public is True)
    aliases: tuple = ()
    dunders: tuple = ()                 # "__neg__"
    autocast: Optional[str] = None
    ref: Optional[str] = None           # numpy reference of x (float64), for the op-table tests
    domain: tuple = (-2.0, 2.0)         # test input range
    doc: str = ""                       # its docstring (else codegen/docs_elementwise.py's entry, else the default)


@dataclass
class Binary:
    """A binary kernel op: one `BinaryOp` case in C++ (formula in tinytorch/math.h)."""
    name: str
    dtypes: str = "arith"
    alpha: bool = False                 # takes `*, alpha=1` (kernel scalar a)
    grad: tuple = ()                    # (d/d input, d/d other) expressions; () = no gradient
    saves: str = ""                     # which of input/other/result the formulas read: "ior"
    grad_fn: Optional[str] = None
    public: object = True               # as Unary.public
    inplace: bool = False
    aliases: tuple = ()
    dunders: tuple = ()                 # "__add__"; "r:__radd__" reflected; "i:__iadd__" in place
    autocast: Optional[str] = None
    ref: Optional[str] = None           # numpy reference of (x, y)
    domain: tuple = (-2.0, 2.0)
    doc: str = ""                       # its docstring (else codegen/docs_elementwise.py's entry, else the default)


@dataclass(frozen=True)
class Keyword:
    """A keyword PyTorch takes that the implementation lacks, accepted by a form (`Op.keywords`):
    its value ``default`` (or, where ``unsupported`` is empty, any value) changes nothing; another
    value raises NotImplementedError naming the op and ``unsupported`` (the reason). ``doc``: its
    Args entry, PyTorch's words ("sparse_grad (bool, optional): ...")."""
    default: object
    doc: str
    unsupported: str = ""


@dataclass
class Op:
    """An op written by hand in its family module (`module.name`), its formula beside it
    (`grad="family"`), or composed of other ops (`grad="composite"`: autograd records the parts).
    The schema still owns its exports, methods, aliases and autocast policy."""
    name: str
    module: str                         # tinytorch._ops.reduce, tinytorch._composites.contractions, ...
    grad: str = "family"                # "family" | "composite" | "none"
    function: bool = True               # tinytorch.<name>
    method: bool = True                 # Tensor.<name>
    impl: Optional[str] = None          # the attribute in module, default name
    method_impl: Optional[str] = None   # a different function for the method form
    inplace: Optional[str] = None       # <name>_ (method; see inplace_function): the attribute implementing it,
                                        # "copy" (computed out of place, copied into self) or "view"
                                        # (self becomes the view the out-of-place form returns)
    of_method: bool = False             # the function form calls the method of that name on its input (impl
                                        # "Tensor.<name>": a query or view the class defines, as detach)
    inplace_function: bool = False      # also tinytorch.<name>_ (PyTorch's in-place functions: relu_, clamp_);
                                        # on a row that is itself in-place (zero_, fill_), tinytorch.<name>
    aliases: tuple = ()                 # other names for the function and method
    dunders: tuple = ()
    autocast: Optional[str] = None
    autocast_method: bool = True        # whether the policy also wraps Tensor.<name>
    ref: Optional[str] = None           # numpy reference of x (or of x, y): an op-table test row
    domain: tuple = (-2.0, 2.0)
    keywords: dict = field(default_factory=dict)
    # PyTorch's keywords a form takes that the implementation does not, by form: "swapaxes" (the
    # function, method and in-place method of that name or alias) or "Tensor.split" (the method
    # alone) -> {PyTorch's keyword: the implementation's parameter it renames ("axis0": "dim0"),
    # or a Keyword it accepts ("sparse_grad": Keyword(False, ...))}


@dataclass
class Functional:
    """A tinytorch.nn.functional function: the schema only carries its autocast policy."""
    name: str
    autocast: str = "fp32"


@dataclass
class Schema:
    unary: list = field(default_factory=list)
    binary: list = field(default_factory=list)
    ops: list = field(default_factory=list)
    functional: list = field(default_factory=list)

    def check(self) -> None:
        seen = set()
        for row in self.unary + self.binary + self.ops:
            key = (type(row).__name__ == "Op", row.name) if isinstance(row, Op) else (False, row.name)
            assert key not in seen, f"duplicate schema row {row.name}"
            seen.add(key)
            assert row.autocast in AUTOCAST, f"{row.name}: autocast must be one of {AUTOCAST}"
        for u in self.unary:
            assert u.dtypes in UNARY_CLASSES, f"{u.name}: dtypes {u.dtypes!r} not in {list(UNARY_CLASSES)}"
            assert len(u.params) <= 2, f"{u.name}: a unary kernel takes at most two scalars"
        for o in self.ops:
            for form, keywords in o.keywords.items():
                base = form.split(".", 1)[1] if form.startswith("Tensor.") else form
                assert base in (o.name,) + tuple(o.aliases), f"{o.name}: keywords for {form!r}, not a form of the row"
                assert all(isinstance(v, (str, Keyword)) for v in keywords.values()), \
                    f"{o.name}: a keyword renames a parameter (str) or is a Keyword"
        for b in self.binary:
            assert b.dtypes in BINARY_CLASSES, f"{b.name}: dtypes {b.dtypes!r} not in {list(BINARY_CLASSES)}"
            assert len(b.grad) in (0, 2), f"{b.name}: grad needs one formula per input"


def camel(name: str) -> str:
    """gelu_tanh -> GeluTanh (the C++ enum spelling)."""
    return "".join(p.capitalize() for p in name.split("_"))
