"""Dependence graphs for Java (tree-sitter-java trees); see :mod:`crystal_lsp.ruby.pdg`.

Nodes: every simple statement and field declaration; the header of every compound statement
(``if``, loops, ``switch`` and each case group, ``try`` and each ``catch``, ``synchronized``);
every type declaration, method, constructor and initializer block (also the entry of its body's
region) and the compilation unit. ``package`` and ``import`` declarations are left out. Labels are
statement kinds; expression statements add their expression's kind, and simple statements the name
of the first method they call (``expression_statement/method_invocation:println``,
``local_variable_declaration:nextInt``).
"""

from __future__ import annotations

from typing import Any

from crystal_lsp.ruby.pdg import BaseWalker, text

_CALLS = {"method_invocation": "name"}
_TYPE_DECLARATIONS = {
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
}
_BODIES = {"class_body", "interface_body", "enum_body", "enum_body_declarations"}
_SKIPPED = {"package_declaration", "import_declaration", "module_declaration"}
_NOT_VARIABLES = {"class_body", "type_arguments", "annotation", "marker_annotation", "modifiers"}


class Names:
    """Variables a piece of code uses, defines (killing) and weakly defines (not killing)."""

    def __init__(self) -> None:
        self.uses: set[str] = set()
        self.defs: set[str] = set()
        self.weak: set[str] = set()

    def expr(self, node: Any, bound: frozenset[str] = frozenset()) -> None:
        """Record what an expression reads and writes."""
        kind = node.type
        if kind == "identifier":
            name = text(node)
            if name not in bound:
                self.uses.add(name)
        elif kind == "field_access":
            self.expr(node.child_by_field_name("object"), bound)
        elif kind == "method_invocation":
            receiver = node.child_by_field_name("object")
            if receiver is not None:
                if receiver.type == "identifier" and text(receiver) not in bound:
                    self.weak.add(text(receiver))
                self.expr(receiver, bound)
            self._field(node, "arguments", bound)
        elif kind == "assignment_expression":
            left = node.child_by_field_name("left")
            operator = node.child_by_field_name("operator")
            if operator is not None and operator.type != "=":
                self.expr(left, bound)
            self.target(left, bound)
            self._field(node, "right", bound)
        elif kind == "update_expression":
            for child in node.named_children:
                self.expr(child, bound)
                self.target(child, bound)
        elif kind == "lambda_expression":
            self._field(node, "body", bound | _lambda_parameters(node))
        elif kind == "variable_declarator":
            self.defs.add(text(node.child_by_field_name("name")))
            self._field(node, "value", bound)
        elif kind not in _NOT_VARIABLES:
            for child in node.named_children:
                self.expr(child, bound)

    def target(self, node: Any, bound: frozenset[str] = frozenset()) -> None:
        """Record a write: a local is defined, a field or element write is weak."""
        if node.type == "identifier":
            self.defs.add(text(node))
            return
        base = node
        while base.type in ("field_access", "array_access", "parenthesized_expression"):
            if base.type == "field_access":
                base = base.child_by_field_name("object")
            elif base.type == "array_access":
                self._field(base, "index", bound)
                base = base.child_by_field_name("array")
            else:
                base = base.named_children[0]
        if base.type == "identifier":
            self.weak.add(text(base))
        self.expr(base, bound)

    def _field(self, node: Any, name: str, bound: frozenset[str]) -> None:
        child = node.child_by_field_name(name)
        if child is not None:
            self.expr(child, bound)


def _lambda_parameters(node: Any) -> frozenset[str]:
    parameters = node.child_by_field_name("parameters")
    if parameters is None:
        return frozenset()
    if parameters.type == "identifier":
        return frozenset({text(parameters)})
    return frozenset(
        text(p.child_by_field_name("name") or p)
        for p in parameters.named_children
        if p.type in ("identifier", "formal_parameter", "spread_parameter")
    )


def parameter_names(parameters: Any) -> set[str]:
    """Names bound by formal parameters."""
    names = set()
    for parameter in parameters.named_children:
        name = parameter.child_by_field_name("name")
        if name is None:  # spread_parameter: ``T... xs``
            declarator = next(
                (c for c in parameter.named_children if c.type == "variable_declarator"), None
            )
            name = declarator.child_by_field_name("name") if declarator is not None else None
        if name is not None:
            names.add(text(name))
    return names


class Walker(BaseWalker):
    """Adds a Java compilation unit to a :class:`~crystal_lsp.ruby.pdg.PdgBuilder`."""

    root_kind = "program"
    calls = _CALLS
    new_names = Names

    def stmt(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        """Add one statement (or member declaration)."""
        kind = node.type
        if kind in _SKIPPED:
            return preds
        if kind in _TYPE_DECLARATIONS:
            return self._type(node, ctrl, preds)
        handler = getattr(self, f"_{kind}", None)
        if handler is not None:
            result: list[int] = handler(node, ctrl, preds)
            return result
        if kind in ("block", "constructor_body"):
            return self.block(node.named_children, ctrl, preds)
        n = self.simple(node, ctrl, preds)
        if kind in ("return_statement", "throw_statement", "yield_statement"):
            return []
        return [n]

    def _type(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        entry = self.b.node(node.type, ctrl, preds)
        body = node.child_by_field_name("body")
        members: list[Any] = []
        for child in body.named_children if body is not None else []:
            members.extend(child.named_children if child.type in _BODIES else [child])
        self.region(entry, (), members)
        return [entry]

    def _method_declaration(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        entry = self.b.node(node.type, ctrl, preds)
        body = node.child_by_field_name("body")
        parameters = node.child_by_field_name("parameters")
        params = parameter_names(parameters) if parameters is not None else set()
        self.region(entry, params, body.named_children if body is not None else [])
        return [entry]

    _constructor_declaration = _method_declaration
    _compact_constructor_declaration = _method_declaration

    def _static_initializer(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        entry = self.b.node(node.type, ctrl, preds)
        statements = [s for block in node.named_children for s in block.named_children]
        self.region(entry, (), statements)
        return [entry]

    def _enum_constant(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return [self.b.node("enum_constant", ctrl, preds)]

    def _labeled_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.block(node.named_children[1:], ctrl, preds)

    def _break_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.jump_break(self.b.node("break_statement", ctrl, preds))

    def _continue_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        return self.jump_continue(self.b.node("continue_statement", ctrl, preds))

    def _if_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("condition"), ctrl, preds, "if_statement")
        exits = self.block(_statements(node, "consequence"), head, [head])
        alternative = node.child_by_field_name("alternative")
        if alternative is None:
            return [*exits, head]
        return exits + self.stmt(alternative, head, [head])

    def _while_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("condition"), ctrl, preds, "while_statement")
        return self.loop(head, _statements(node, "body"))

    _do_statement = _while_statement

    def _for_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = Names()
        for part in ("init", "condition", "update"):
            for child in node.children_by_field_name(part):
                names.expr(child)
        head = self.b.node("for_statement", ctrl, preds, names.uses, names.defs, names.weak)
        return self.loop(head, _statements(node, "body"))

    def _enhanced_for_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = Names()
        names.expr(node.child_by_field_name("value"))
        name = node.child_by_field_name("name")
        if name is not None:
            names.defs.add(text(name))
        head = self.b.node("enhanced_for_statement", ctrl, preds, names.uses, names.defs)
        return self.loop(head, _statements(node, "body"))

    def _switch_expression(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        head = self.simple(node.child_by_field_name("condition"), ctrl, preds, "switch")
        self.enter_switch(head)
        exits: list[int] = []
        fallthrough: list[int] = []
        body = node.child_by_field_name("body")
        for group in body.named_children if body is not None else []:
            case = self.b.node(group.type, head, [head, *fallthrough])
            statements = [c for c in group.named_children if c.type != "switch_label"]
            ends = self.block(statements, case, [case])
            if group.type == "switch_rule":
                exits += ends
            else:
                fallthrough = ends
        exits += fallthrough
        breaks = self.leave_switch()
        default = any(
            label.named_child_count == 0
            for group in (body.named_children if body is not None else [])
            for label in group.named_children
            if label.type == "switch_label"
        )
        return exits + breaks + ([] if default else [head])

    _switch_statement = _switch_expression

    def _try_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        names = Names()
        resources = node.child_by_field_name("resources")
        if resources is not None:
            names.expr(resources)
        head = self.b.node(node.type, ctrl, preds, names.uses, names.defs, names.weak)
        mark = head + 1
        exits = self.block(_statements(node, "body"), head, [head])
        raising = [head, *self.b.created_since(mark)]
        handler_exits: list[int] = []
        finally_clause = None
        for clause in node.named_children:
            if clause.type == "catch_clause":
                defs = set()
                for part in clause.named_children:
                    if part.type == "catch_formal_parameter":
                        name = part.child_by_field_name("name")
                        if name is not None:
                            defs.add(text(name))
                catch = self.b.node("catch_clause", head, raising, defs=defs)
                handler_exits += self.block(_statements(clause, "body"), catch, [catch])
            elif clause.type == "finally_clause":
                finally_clause = clause
        exits += handler_exits
        if finally_clause is not None:
            statements = [s for b in finally_clause.named_children for s in b.named_children]
            exits = self.block(statements, head, exits)
        return exits

    _try_with_resources_statement = _try_statement

    def _synchronized_statement(self, node: Any, ctrl: int, preds: list[int]) -> list[int]:
        lock = node.named_children[0]
        head = self.simple(lock, ctrl, preds, "synchronized_statement")
        return self.block(_statements(node, "body"), head, [head])


def _statements(node: Any, name: str) -> list[Any]:
    """The statements of a field holding a block or a single statement."""
    child = node.child_by_field_name(name)
    if child is None:
        return []
    return list(child.named_children) if child.type == "block" else [child]
