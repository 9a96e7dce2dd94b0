def table(rows) -> str:
    header = ["benchmark", "data", "measured (median)", "floor", "ratio", "target", "met"]
    body = [
        [
            r.benchmark,
            r.data,
            r.value,
            r.floor,
            f"{r.ratio:.2f}",
            r.target,
            "–" if r.met is None else "yes" if r.met else "NO",
        ]
        for r in rows
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)
