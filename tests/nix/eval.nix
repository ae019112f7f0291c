# Evaluated by tests/nix_preload.sh with bdwgc and with sgc preloaded:
# attribute sets, lists, strings, recursion and a sort, enough to collect.
let
  range = n: builtins.genList (x: x) n;
  fib = n: if n < 2 then n else fib (n - 1) + fib (n - 2);
  big = builtins.listToAttrs (map (i: { name = "k${toString i}"; value = { a = i; b = toString i; c = range 10; }; }) (range 20000));
  sum = builtins.foldl' (a: b: a + b) 0;
in {
  n = builtins.length (builtins.attrNames big);
  s = sum (map (k: big.${k}.a) (builtins.attrNames big));
  f = fib 18;
  str = builtins.stringLength (builtins.concatStringsSep "," (map toString (range 20000)));
  sorted = builtins.elemAt (builtins.sort (a: b: a > b) (map (i: (i * 7919) - (i * 7919 / 10007) * 10007) (range 20000))) 5;
}
