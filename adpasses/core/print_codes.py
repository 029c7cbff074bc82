"""How generated code hands the values of a Python `print` to the
runtime's callback (adpasses/native/python_print.py; emitted by
adpasses/lowering/printf.py for `printf.print_format` ops marked
`ad.python_print`): a kind per value and its i64 slots.

| kind | slots |
|---|---|
| F64 | the f64's bits |
| F32 | the f32 widened to f64, its bits |
| INT | the value (index, i64, i32 sign-extended) |
| BOOL | 0 or 1 |
| ARRAY + k | pointer, offset, rank, sizes..., strides... (in elements); dtype ARRAY_DTYPES[k] |
"""

F64, F32, INT, BOOL, ARRAY = 0, 1, 2, 3, 16
ARRAY_DTYPES = ("float64", "float32", "int64", "int32", "bool")
SYMBOL = "adpasses_python_print"
SPEC_SEP = "\x1f"  # between the format specs of the values ("", "!r", ":.3f")

NUMPY_REPR = "!n"
"""The conversion of an f-string field `{v!r}` whose value Python holds as
a numpy scalar (an array element): repr of the numpy scalar of its kind,
`np.float64(0.1)`, `np.int64(3)`, `np.True_` (`!r` of a Python float: `0.1`)."""
INT32_REPR = "!i"
"""`{v!r}` of an np.int32 (the value comes as an INT): `np.int32(3)`."""
