"""``tinytorch.Size``: the shape tuple type, as torch.Size."""


class Size(tuple):
    def __repr__(self) -> str:
        return f"tinytorch.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
