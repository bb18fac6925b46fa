"""Model lists as the scripts take them: "784-1024-1024-10:256,784-512-512-10:128" (an MNIST MLP's
layer widths, then its batch)."""


def split_list(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_model(entry, error):
    """'784-1024-1024-10:256' -> ('784-1024-1024-10', [784, 1024, 1024, 10], 256). A bad entry
    calls error(message), which must not return (argparse's ArgumentParser.error)."""
    try:
        layers, batch = entry.split(":")
        sizes = [int(s) for s in layers.split("-")]
        batch = int(batch)
    except ValueError:
        error(f"bad --models entry '{entry}' (want e.g. 784-1024-1024-10:256)")
    if len(sizes) < 3 or sizes[0] != 784 or sizes[-1] != 10 or min(sizes) < 1 or batch < 1:
        error(f"--models entry '{entry}' must be 784-...-10 with positive widths and batch")
    return layers, sizes, batch
