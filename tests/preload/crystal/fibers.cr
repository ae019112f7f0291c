# Fibers under a collector preloaded in place of bdwgc (crystal_preload.sh).
#
# Crystal runs fibers on stacks of its own: on every switch it moves
# GC_stackbottom to the running fiber's stack, and from
# GC_set_push_other_roots it pushes the stacks of the fibers not running.
# A collector that ignored GC_stackbottom would scan from a fiber's stack
# pointer to the main stack's end (or nothing), and the tree below, held
# only by the main fiber's stack, or each fiber's own tree, would be
# reclaimed and reused while the fibers churn garbage.

class Node
  getter value : Int64
  getter left : Node?
  getter right : Node?

  def initialize(@value, @left = nil, @right = nil)
  end
end

def build(depth : Int32, value : Int64) : Node
  return Node.new(value) if depth == 0
  Node.new(value, build(depth - 1, value * 2), build(depth - 1, value * 2 + 1))
end

def total(node : Node?) : Int64
  return 0_i64 unless node
  node.value + total(node.left) + total(node.right)
end

# Garbage, with switches to the other fibers in between.
def churn(rounds : Int32) : Int64
  sum = 0_i64
  rounds.times do |i|
    sum += total(build(12, i.to_i64))
    Fiber.yield if i % 3 == 0
  end
  sum
end

kept = build(16, 1_i64)
expected = total(kept)
results = Channel(Int64).new
8.times do |f|
  spawn do
    mine = build(14, f.to_i64 + 1)
    mine_before = total(mine)
    sum = churn(40)
    results.send(total(mine) == mine_before ? sum + mine_before : -1_i64)
  end
end
sum = 0_i64
8.times do
  value = results.receive
  raise "a fiber's tree changed" if value < 0
  sum += value
  GC.collect
end
raise "the main fiber's tree changed" unless total(kept) == expected
strings = (1..100_000).map { |i| "s#{i}" }
puts "fibers #{sum} strings #{strings.size} #{strings.last} kept #{expected}"
