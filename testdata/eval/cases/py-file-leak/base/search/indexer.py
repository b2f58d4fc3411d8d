from .index import Index


def index_documents(paths, index: Index):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            index.add(path, f.read())
