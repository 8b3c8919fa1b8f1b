"""Code fragments, broken code and odd Unicode for the fastlex differential tests."""

from __future__ import annotations

FRAGMENTS = [
    "def f(x, *a, **k):\n    return x[1:] + a\n",
    "class A(B):\n    '''doc'''\n    x: int = 0x1F\n",
    'print(f"{x!r:>10} {y}")\n',
    'public static void main(String[] args) { System.out.println("hi"); }\n',
    "#include <stdio.h>\nint main(void) { return 0; }\n",
    "template <typename T> auto f(T&& t) -> decltype(t) { return t; }\n",
    "const re = /a[/]b/gi; let s = `x ${y + `z`}`;\n",
    'func main() { fmt.Println("x") }\n',
    "fn main() -> Result<(), E> { let r#x = 'a'; Ok(()) }\n",
    "SELECT * FROM t WHERE a = 'x' -- c\n",
    "/* unterminated comment",
    '"unterminated string',
    "'''triple",
    "<?php echo $x; ?>\n",
    "local t = {1, 2; [3] = 'x'} -- lua\n",
    "@decorator\nasync def g(): await h()\n",
    "#!/usr/bin/env python\n",
    "{ ( [ ] ) } ;;; ::: ->> <=> ...\n",
    "1e10 0b1010 0o17 1_000.5j .5 5.\n",
    "\\\n\\n\\t\\u1234\\x00",
    "   \t\r\n\r\n\f\v",
    "\u212a\u017f\u0130\u0131 é ß ǅ",  # letters that fold to or from ASCII under IGNORECASE
    "\u2028\u2029\x00\x1b\ufeff",
    "名前 = 'ユニコード' # 😀\n",
]
