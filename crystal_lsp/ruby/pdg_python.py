"""Dependence graphs for Python (tree-sitter-python trees); see :mod:`crystal_lsp.ruby.pdg`.

Nodes: every simple statement; the header of every compound statement (``if``/``elif``, loops,
``try``/``except``, ``with``, ``match``/``case``); every ``def``/``class`` (also the entry of its
body's region) and the module. A node's label is its statement kind; expression statements add
their expression's kind, and simple statements the name of the first function they call
(``expression_statement/call:print``, ``expression_statement/assignment:input``).
"""

from __future__ import annotations

from typing import Any

from crystal_lsp.ruby.pdg import BaseWalker, text

_CALLS = {"call": "function"}
_COMPREHENSIONS = {
    "list_comprehension",
    "set_comprehension",
    "dictionary_comprehension",
    "generator_expression",
}
_TARGET_GROUPS = {
    "pattern_list",
    "tuple_pattern",
    "list_pattern",
    "tuple",
    "list",
    "parenthesized_expression",
    "expression_list",
    "list_splat_pattern",
    "list_splat",
}
_PARAMETER_NAMES = {"default_parameter", "typed_default_parameter"}


class Names:
    """Variables a piece of code uses, defines (killing) and weakly defines (not killing)."""

    def __init__(self) -> None:
        self.uses: set[str] = set()
        self.defs: set[str] = set()
        self.weak: set[str] = set()

    def expr(self, node: Any, bound: frozenset[str] = frozenset()) -> None:
        """Record what an expression reads (and the names it binds with ``:=``)."""
        kind = node.type
        if kind == "identifier":
            name = text(node)
            if name not in bound:
                self.uses.add(name)
        elif kind == "attribute":
            self.expr(node.child_by_field_name("object"), bound)
        elif kind == "keyword_argument":
            self._field(node, "value", bound)
        elif kind == "call":
            function = node.child_by_field_name("function")
            if function.type == "attribute":
                receiver = function.child_by_field_name("object")
                if receiver.type == "identifier":
                    self.weak.add(text(receiver))
            self.expr(function, bound)
            self._field(node, "arguments", bound)
        elif kind in _COMPREHENSIONS:
            inner = set(bound)
            for clause in node.named_children:
                if clause.type == "for_in_clause":
                    local = Names()
                    local.target(clause.child_by_field_name("left"))
                    inner |= local.defs
            for child in node.named_children:
                if child.type == "for_in_clause":
                    self._field(child, "right", frozenset(inner))
                else:
                    self.expr(child, frozenset(inner))
        elif kind == "lambda":
            parameters = node.child_by_field_name("parameters")
            names = parameter_names(parameters) if parameters is not None else set()
            self._field(node, "body", bound | names)
        elif kind == "named_expression":
            self.defs.add(text(node.child_by_field_name("name")))
            self._field(node, "value", bound)
        elif kind == "assignment":
            self.target(node.child_by_field_name("left"))
            self._field(node, "right", bound)
        elif kind == "augmented_assignment":
            left = node.child_by_field_name("left")
            self.expr(left, bound)
            self.target(left)
            self._field(node, "right", bound)
        elif kind not in ("function_definition", "class_definition"):
            for child in node.named_children:
                self.expr(child, bound)

    def target(self, node: Any) -> None:
        """Record an assignment target: names are defined, element/field writes are weak."""
        kind = node.type
        if kind == "identifier":
            self.defs.add(text(node))
        elif kind in _TARGET_GROUPS:
            for child in node.named_children:
                self.target(child)
        elif kind in ("attribute", "subscript"):
            base = node
            while base.type in ("attribute", "subscript"):
                base = base.child_by_field_name("object" if base.type == "attribute" else "value")
            if base.type == "identifier":
                self.weak.add(text(base))
            self.expr(node)
        else:
            self.expr(node)

    def _field(self, node: Any, name: str, bound: frozenset[str]) -> None:
        child = node.child_by_field_name(name)
        if child is not None:
            self.expr(child, bound)


def parameter_names(parameters: Any) -> set[str]:
    """Names bound by a parameter list."""
    names: set[str] = set()
    for parameter in parameters.named_children:
        if parameter.type == "identifier":
            names.add(text(parameter))
        elif parameter.type in _PARAMETER_NAMES:
            names.add(text(parameter.child_by_field_name("name")))
        else:
            names.update(text(c) for c in parameter.named_children if c.type == "identifier")
    return names


class Walker(BaseWalker):
    """Adds the statements of a Python module to a :class:`~crystal_lsp.ruby.pdg.PdgBuilder`."""

    root_kind = "module"
    calls = _CALLS
    new_names = Names

    def stmt(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        """Add one statement."""
        kind = node.type
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            result: list[int] = handler(node, ctrl, preds)
            return result
        if kind == "block":
            return self.block(node.named_children, ctrl, preds)
        n = self.simple(node, ctrl, preds)
        if kind in ("return_statement", "raise_statement"):
            return []
        return [n]

    def _break_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.jump_break(self.b.node("break_statement", ctrl, preds))

    def _continue_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.jump_continue(self.b.node("continue_statement", ctrl, preds))

    def _import_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = set()
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                names.add(text(child.child_by_field_name("alias")))
            else:
                names.add(text(child).split(".")[0])
        return [self.b.node(node.type, ctrl, preds, defs=names)]

    def _import_from_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = set()
        for child in node.children_by_field_name("name"):
            alias = child.child_by_field_name("alias") if child.type == "aliased_import" else None
            names.add(text(alias if alias is not None else child).split(".")[-1])
        return [self.b.node(node.type, ctrl, preds, defs=names)]

    def _if_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("condition"), ctrl, preds, "if_statement")
        exits = self.block(_body(node, "consequence"), head, [head])
        last = head
        has_else = False
        for clause in node.children_by_field_name("alternative"):
            if clause.type == "elif_clause":
                condition = clause.child_by_field_name("condition")
                last = self.simple(condition, last, [last], "elif_clause")
                exits += self.block(_body(clause, "consequence"), last, [last])
            else:
                has_else = True
                exits += self.block(_body(clause, "body"), last, [last])
        return exits if has_else else [*exits, last]

    def _for_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = Names()
        names.expr(node.child_by_field_name("right"))
        names.target(node.child_by_field_name("left"))
        head = self.b.node("for_statement", ctrl, preds, names.uses, names.defs, names.weak)
        return self._loop_with_else(node, head)

    def _while_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("condition"), ctrl, preds, "while_statement")
        return self._loop_with_else(node, head)

    def _loop_with_else(self, node: Any, head: int) -> list[int]:
        exits = self.loop(head, _body(node, "body"))
        alternative = node.child_by_field_name("alternative")
        if alternative is None:
            return exits
        return self.block(_body(alternative, "body"), head, [head]) + exits[1:]

    def _try_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.b.node("try_statement", ctrl, preds)
        mark = head + 1
        exits = self.block(_body(node, "body"), head, [head])
        raising = [head, *self.b.created_since(mark)]
        finally_clause = None
        handler_exits: list[int] = []
        for clause in node.named_children:
            if clause.type == "except_clause":
                names = Names()
                for part in clause.named_children:
                    if part.type == "as_pattern":
                        names.expr(part.named_children[0])
                        names.target(part.child_by_field_name("alias").named_children[0])
                    elif part.type != "block":
                        names.expr(part)
                catch = self.b.node(
                    "except_clause", head, raising, names.uses, names.defs, names.weak
                )
                handler_exits += self.block(_blocks(clause), catch, [catch])
            elif clause.type == "else_clause":
                exits = self.block(_body(clause, "body"), head, exits)
            elif clause.type == "finally_clause":
                finally_clause = clause
        exits += handler_exits
        if finally_clause is not None:
            exits = self.block(_blocks(finally_clause), head, exits)
        return exits

    def _with_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = Names()
        for clause in node.named_children:
            if clause.type != "with_clause":
                continue
            for item in clause.named_children:
                value = item.child_by_field_name("value")
                if value is not None and value.type == "as_pattern":
                    names.expr(value.named_children[0])
                    names.target(value.child_by_field_name("alias").named_children[0])
                elif value is not None:
                    names.expr(value)
        head = self.b.node("with_statement", ctrl, preds, names.uses, names.defs, names.weak)
        return self.block(_body(node, "body"), head, [head])

    def _match_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("subject"), ctrl, preds, "match_statement")
        exits: list[int] = []
        last = head
        for block in _body(node, "body"):
            for case in block.named_children if block.type == "block" else [block]:
                if case.type != "case_clause":
                    continue
                test = self.b.node("case_clause", head, [last])
                exits += self.block(_body(case, "consequence"), test, [test])
                last = test
        return [*exits, last]

    def _function_definition(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        parameters = node.child_by_field_name("parameters")
        outer = Names()
        for parameter in parameters.named_children:
            if parameter.type in _PARAMETER_NAMES:
                outer.expr(parameter.child_by_field_name("value"))
        name = text(node.child_by_field_name("name"))
        entry = self.b.node("function_definition", ctrl, preds, outer.uses, {name})
        self.region(entry, parameter_names(parameters), _body(node, "body"))
        return [entry]

    def _class_definition(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        outer = Names()
        superclasses = node.child_by_field_name("superclasses")
        if superclasses is not None:
            outer.expr(superclasses)
        name = text(node.child_by_field_name("name"))
        entry = self.b.node("class_definition", ctrl, preds, outer.uses, {name})
        self.region(entry, (), _body(node, "body"))
        return [entry]

    def _decorated_definition(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.stmt(node.child_by_field_name("definition"), ctrl, preds)


def _body(node: Any, name: str) -> list[Any]:
    """The statements of a field that holds a block (or a single statement)."""
    child = node.child_by_field_name(name)
    if child is None:
        return []
    return list(child.named_children) if child.type == "block" else [child]


def _blocks(node: Any) -> list[Any]:
    """The statements of the block children of a clause."""
    return [
        s for child in node.named_children if child.type == "block" for s in child.named_children
    ]
