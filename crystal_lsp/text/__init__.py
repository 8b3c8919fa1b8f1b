"""The text layer: sources, lexers, tokens, views, snippets and file entries."""
