# Timed with tools/preload_bench.py (docs/benchmarks/history.md, "Nix's
# evaluator on sgc"): attribute sets, lists, strings, recursion.
let
  range = n: builtins.genList (x: x) n;
  fib = n: if n < 2 then n else fib (n - 1) + fib (n - 2);
  big = builtins.listToAttrs (map (i: { name = "k${toString i}"; value = { a = i; b = toString i; c = range 10; }; }) (range 200000));
  sum = builtins.foldl' (a: b: a + b) 0;
in {
  n = builtins.length (builtins.attrNames big);
  s = sum (map (k: big.${k}.a) (builtins.attrNames big));
  f = fib 24;
  str = builtins.stringLength (builtins.concatStringsSep "," (map toString (range 100000)));
}
