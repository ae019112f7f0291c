# Attribute sets, lists, strings, recursion and a sort, for Nix's
# evaluator on bdwgc and on sgc: timed with tools/dev/preload_bench.py
# (docs/benchmarks/history.md, "Nix's evaluator on sgc") at the default
# size, and compared by tests/preload/nix_preload.sh with --arg n 20000.
{ n ? 200000 }:
let
  range = k: builtins.genList (x: x) k;
  fib = k: if k < 2 then k else fib (k - 1) + fib (k - 2);
  big = builtins.listToAttrs (map (i: { name = "k${toString i}"; value = { a = i; b = toString i; c = range 10; }; }) (range n));
  sum = builtins.foldl' (a: b: a + b) 0;
in {
  n = builtins.length (builtins.attrNames big);
  s = sum (map (k: big.${k}.a) (builtins.attrNames big));
  f = fib (if n >= 200000 then 24 else 18);
  str = builtins.stringLength (builtins.concatStringsSep "," (map toString (range (n / 2))));
  sorted = builtins.elemAt (builtins.sort (a: b: a > b) (map (i: (i * 7919) - (i * 7919 / 10007) * 10007) (range n))) 5;
}
