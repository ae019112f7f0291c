# A program that pulls in much of Crystal's standard library, for timing
# the Crystal compiler on bdwgc and on sgc (tools/dev/preload_bench.py --crystal).
require "json"
require "yaml"
require "http/server"
require "http/client"
require "xml"
require "csv"
require "uri"
require "big"
require "complex"
require "digest/sha256"
require "base64"
require "compress/gzip"
require "ecr"
require "option_parser"
require "log"
require "spec/dsl"
server = HTTP::Server.new { |ctx| ctx.response.print({"a" => [1, 2.5, "x"]}.to_json) }
puts YAML.parse("a: [1, 2]").to_json
puts JSON.parse(%({"k": [1, 2, {"z": null}]})).to_yaml
doc = XML.parse("<a><b>1</b></a>")
puts doc.first_element_child.try &.content
puts CSV.parse("a,b\n1,2").to_json
puts URI.parse("http://x/y?z=1").query
puts BigInt.new(2) ** 100, BigDecimal.new("1.5") * 3, BigRational.new(1, 3) + 1
puts Complex.new(1, 2) * Complex.new(3, 4)
puts Digest::SHA256.hexdigest("abc"), Base64.encode("abc")
io = IO::Memory.new
Compress::Gzip::Writer.open(io) { |gz| gz.print "hello" }
OptionParser.parse(["-v"]) { |p| p.on("-v", "v") { puts "v" } }
Log.info { "log" }
client = HTTP::Client.new("localhost")
h = Hash(String, Array(Int32 | String | Float64)).new
h["x"] = [1, "a", 2.0]
puts h.to_json, h.to_yaml
