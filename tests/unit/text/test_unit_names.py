"""Unit names in every language: no empty name, no keyword or macro as a name (issue 31).

Each case is a small file of one language with the shape real projects showed misnamed: Rust's
``pub(crate)`` visibility read as a function ``pub``, ``let (a, b) = match x {`` as a function
``let``, PHP's ``elseif (...) {`` as a function ``elseif``, a closure's ``use (...)`` as its name,
PHP's one-token ``()`` and ``];``, Ruby's ``class << self`` without a name.
"""

from __future__ import annotations

import pytest

from crystal_lsp.text.snippets import CONTAINERS, Snippet, extract, token_lines
from crystal_lsp.text.tokens import tokenize
from crystal_lsp.text.views import categories


def snippets(source: str, language: str, path: str) -> list[Snippet]:
    """The units of ``source`` lexed as the index lexes ``path``."""
    tokens = tokenize(source, language, filename=path)
    cats = categories(tokens.texts, tokens.types)
    lines = token_lines(tokens.starts, source)
    return extract(tokens.texts, cats, lines, source, language, min_tokens=1, min_lines=1)


RUST = """pub(crate) enum ParserNumber {
    F64(f64),
    U64(u64),
}

pub(crate) fn parse_pair(frame: Option<u8>) -> (bool, u8) {
    let (accept, value) = match frame {
        Some(v) => (false, v),
        None => (true, 0),
    };
    (accept, value)
}
"""
PHP = """<?php
class Reporter
{
    private const ESCAPED = [
        '%' => '%25',
        "\\r" => '%0D',
    ];

    public static function isGithub(): bool
    {
        return false !== getenv('GITHUB_ACTIONS');
    }

    public function run($output)
    {
        $render = function (\\Throwable $e) use ($output) {
            return $e;
        };
        if ($output) {
            $output->write('a');
        } elseif ($render) {
            $output->write('b');
        }
    }
}
"""
RUBY = """module Rack
  class Nonce
    class << self
      attr_accessor :private_key
    end

    def valid?
      true
    end
  end
end
"""
CSHARP = """namespace Acme.Tools
{
    public sealed class Ledger : IDisposable
    {
        public int Total(int[] values)
        {
            var sum = 0;
            foreach (var v in values) { sum += v; }
            return sum;
        }

        public void Dispose() { }
    }
}
"""
GO = """package store

func (s *Store) Get(key string) (string, bool) {
	if v, ok := s.items[key]; ok {
		return v, true
	}
	return "", false
}
"""
KEYWORDS = {"if", "elseif", "else", "for", "foreach", "while", "let", "pub", "use", "const", "var"}


@pytest.mark.parametrize(
    ("source", "language", "path", "expected"),
    [
        (RUST, "rust", "de.rs", {("class", "ParserNumber"), ("function", "parse_pair")}),
        (
            PHP,
            "php",
            "Reporter.php",
            {
                ("class", "Reporter"),
                ("function", "isGithub"),
                ("function", "run"),
                ("function", "$render"),
            },
        ),
        (RUBY, "ruby", "nonce.rb", {("class", "Nonce"), ("class", "self"), ("function", "valid?")}),
        (
            CSHARP,
            "csharp",
            "Ledger.cs",
            {
                ("namespace", "Acme.Tools"),
                ("class", "Ledger"),
                ("function", "Total"),
                ("function", "Dispose"),
            },
        ),
        (GO, "go", "store.go", {("function", "Get")}),
    ],
)
def test_units_are_named_after_their_definitions(
    source: str, language: str, path: str, expected: set[tuple[str, str]]
) -> None:
    found = [(s.kind, s.name) for s in snippets(source, language, path)]
    named = {(kind, name) for kind, name in found if kind in CONTAINERS}
    assert expected <= named, found
    assert not any(kind in CONTAINERS and (not name or name in KEYWORDS) for kind, name in found)


PHP_CALLBACKS = """<?php
class Describer
{
    public function describeCommand($command, array $options = [])
    {
        $this->write(
            '### Usage'
            .array_reduce($command->getAliases(), function ($carry, $usage) {
                return $carry.'* '.$usage;
            })
        );
        $total = $command->count();
    }

    public function reset() {}

    public function describeOption($option)
    {
        $this->write($option->getName());
    }
}
"""


def test_php_runs_of_brackets_open_and_close_units() -> None:
    """PHP lexes ``})`` and ``{}`` as one token each: their braces still close and open units.

    Before, a callback's ``})`` closed nothing: ``describeCommand`` was lost, the callback ran
    on over the next methods, and code after it lay in a unit named ``$total``.
    """
    found = {(s.kind, s.name): s for s in snippets(PHP_CALLBACKS, "php", "Describer.php")}
    assert {("function", "describeCommand"), ("function", "describeOption")} <= set(found)
    callback = found[("function", "array_reduce callback")]
    command = found[("function", "describeCommand")]
    assert command.start < callback.start and callback.end < command.end
    assert (callback.first_line, callback.last_line) == (5, 9)
    assert not any(name.startswith("$") for _, name in found)
