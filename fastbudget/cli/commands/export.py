"""``fastbudget export MODEL_FILE -o OUT.onnx``: a saved model as an ONNX graph (the
``onnx`` extra), its scaler file baked in front."""
import os
from types import SimpleNamespace

import numpy as np

from ..._progress import note
from ...persist import atomic_file
from ..errors import CLIError
from ..files import check_not_input, check_output, load_model
from ..scaler import SCALER_SUFFIX


def run(opts, args):
    """``fastbudget export MODEL -o OUT.onnx``: the model as an ONNX graph (see
    ``fastbudget.onnx``), with the scaler saved beside it baked in front unless
    ``--no-scaler``, so that the graph takes the rows ``fastbudget predict`` takes."""
    check_output(args.output, "-o")
    check_not_input(args.output, "-o", [
        ("model file", opts.model), ("model's scaler file", opts.model + SCALER_SUFFIX)])
    try:
        from ...onnx import to_onnx
    except ImportError as exc:
        raise CLIError(f"export needs the onnx package ({exc}); install it with "
                       "pip install 'fastbudget[onnx]'.") from None
    model, scaler = load_model(opts.model)
    baked = None
    if not args.no_scaler and scaler.mean is not None:
        baked = SimpleNamespace(mean_=scaler.mean, scale_=scaler.scale, clip=scaler.clip)
    elif not args.no_scaler and not scaler.found:
        note(f"fastbudget: no {os.path.basename(opts.model) + SCALER_SUFFIX} beside the model: "
             "the graph takes the rows as the model does (no standardisation baked in).")
    proto = to_onnx(model, scaler=baked, target_opset=args.opset,
                    dtype=np.float32 if args.float32 else np.float64,
                    probabilities=not args.no_probabilities)
    with atomic_file(args.output, "wb") as f:
        f.write(proto.SerializeToString())
    how = ("raw rows, standardised inside the graph" if baked is not None else
           "rows as the model takes them")
    print(f"exported {type(model).__name__} ({model.n_features_in_} features, "
          f"{len(model.classes_)} classes) to {args.output}: input X "
          f"{'float32' if args.float32 else 'float64'} ({how}); outputs label, scores"
          f"{'' if args.no_probabilities else ', probabilities'}")
    return 0
