from .index import Index


def lines_of(path):
    f = open(path, encoding="utf-8")
    return (line.rstrip("\n") for line in f)


def index_documents(paths, index: Index):
    for path in paths:
        for number, line in enumerate(lines_of(path), start=1):
            index.add_line(path, number, line)
