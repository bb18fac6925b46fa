"""Measured rows (dicts) as text: each value formatted by its column's spec where it has one, an
absent value (None) as an empty cell. For scripts/pytorch's CSV files and Markdown tables.

    fmt(value, spec, scale=1.0)
    formatted_csv(columns, rows, formats)   CSV text, the header first
    markdown_table(columns, rows, formats)  a Markdown table, "-" for an empty cell
"""
from gemm_mlp_tools.atomic import csv_text


def fmt(value, spec, scale=1.0):
    return "" if value is None else format(value * scale, spec)


def _cells(row, columns, formats):
    return [fmt(row[c], formats[c]) if c in formats else row[c] for c in columns]


def formatted_csv(columns, rows, formats):
    return csv_text([columns] + [_cells(r, columns, formats) for r in rows], lineterminator="\n")


def markdown_table(columns, rows, formats):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) or "-" for c in _cells(r, columns, formats)) + " |")
    return "\n".join(lines) + "\n"
