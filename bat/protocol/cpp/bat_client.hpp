// bat_client.hpp: a C++17 client of the BAT tuner protocol, version 1 (docs/PROTOCOL.md).
//
// One header, the standard library only. The JSON reader and writer below are
// hand-written and minimal: they cover what this protocol sends (objects,
// arrays, strings with escapes, integers, doubles, booleans, null), which is
// simpler than vendoring a JSON library that no package manager on the target
// machines is guaranteed to provide.
//
//   bat::Client client = bat::Client::stdio();      // BAT started us: protocol on stdin/stdout
//   const bat::Problem& p = client.hello("my tuner");
//   bat::Config c(p.parameters.size(), 0);            // value indices, one per parameter
//   if (client.valid({c})[0]) { bat::Result r = client.evaluate(c); }
//   client.done();
//
// Configurations are vectors of value indices into Problem::parameters[j].values;
// the client sends them as objects of parameter values. Error replies throw
// bat::ServerError (code, field, message); after Client::stdio() std::cout writes
// to stderr, so a stray print cannot corrupt the protocol.
#ifndef BAT_CLIENT_HPP
#define BAT_CLIENT_HPP

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bat {

constexpr int PROTOCOL_VERSION = 1;

namespace json {

// A JSON value. Integers that fit int64 keep their integer type, so values round-trip exactly.
class Value {
 public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };
  using Array = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;  // member order kept

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Bool), bool_(b) {}
  Value(int i) : kind_(Kind::Int), int_(i) {}
  Value(long long i) : kind_(Kind::Int), int_(i) {}
  Value(double d) : kind_(Kind::Double), double_(d) {}
  Value(const char* s) : kind_(Kind::String), string_(s) {}
  Value(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  Value(Array a) : kind_(Kind::Array), array_(std::make_shared<Array>(std::move(a))) {}
  Value(Object o) : kind_(Kind::Object), object_(std::make_shared<Object>(std::move(o))) {}

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Double; }
  bool as_bool() const { expect(Kind::Bool, "a boolean"); return bool_; }
  long long as_int() const { expect(Kind::Int, "an integer"); return int_; }
  double as_double() const {
    if (kind_ == Kind::Int) return static_cast<double>(int_);
    expect(Kind::Double, "a number");
    return double_;
  }
  const std::string& as_string() const { expect(Kind::String, "a string"); return string_; }
  const Array& as_array() const { expect(Kind::Array, "an array"); return *array_; }
  const Object& as_object() const { expect(Kind::Object, "an object"); return *object_; }

  // Member `key` of an object (a null value when absent).
  const Value& operator[](const std::string& key) const {
    static const Value null_value;
    for (const auto& member : as_object())
      if (member.first == key) return member.second;
    return null_value;
  }
  bool has(const std::string& key) const {
    for (const auto& member : as_object())
      if (member.first == key) return true;
    return false;
  }

 private:
  void expect(Kind k, const char* what) const {
    if (kind_ != k) throw std::runtime_error(std::string("JSON: expected ") + what);
  }
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  long long int_ = 0;
  double double_ = 0.0;
  std::string string_;
  std::shared_ptr<Array> array_;
  std::shared_ptr<Object> object_;
};

namespace detail {

inline void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}

  Value document() {
    Value v = value();
    space();
    if (i_ != s_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void literal(const char* word) {
    for (const char* c = word; *c; ++c, ++i_)
      if (i_ >= s_.size() || s_[i_] != *c) fail(std::string("expected ") + word);
  }
  Value value() {
    switch (peek()) {
      case '{': return object();
      case '[': return array();
      case '"': return Value(string());
      case 't': literal("true"); return Value(true);
      case 'f': literal("false"); return Value(false);
      case 'n': literal("null"); return Value();
      default: return number();
    }
  }
  Value object() {
    Value::Object members;
    ++i_;
    if (peek() == '}') { ++i_; return Value(std::move(members)); }
    while (true) {
      if (peek() != '"') fail("expected a member name");
      std::string key = string();
      if (peek() != ':') fail("expected ':'");
      ++i_;
      members.emplace_back(std::move(key), value());
      char c = peek();
      ++i_;
      if (c == '}') return Value(std::move(members));
      if (c != ',') fail("expected ',' or '}'");
    }
  }
  Value array() {
    Value::Array items;
    ++i_;
    if (peek() == ']') { ++i_; return Value(std::move(items)); }
    while (true) {
      items.push_back(value());
      char c = peek();
      ++i_;
      if (c == ']') return Value(std::move(items));
      if (c != ',') fail("expected ',' or ']'");
    }
  }
  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("short \\u escape");
    unsigned cp = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s_[i_++];
      cp <<= 4;
      if (c >= '0' && c <= '9') cp |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') cp |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') cp |= static_cast<unsigned>(c - 'A' + 10);
      else fail("bad \\u escape");
    }
    return cp;
  }
  std::string string() {
    std::string out;
    ++i_;  // the opening quote
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') { out += c; continue; }
      if (i_ >= s_.size()) fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
            i_ += 2;
            unsigned low = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  Value number() {
    std::size_t start = i_;
    bool integral = true;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c >= '0' && c <= '9') { ++i_; continue; }
      if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { integral = false; ++i_; continue; }
      break;
    }
    std::string text = s_.substr(start, i_ - start);
    if (text.empty() || text == "-") fail("expected a value");
    char* end = nullptr;
    if (integral) {
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (errno == 0 && *end == '\0') return Value(v);
    }
    double d = std::strtod(text.c_str(), &end);  // correctly rounded: values round-trip
    if (*end != '\0') fail("bad number '" + text + "'");
    return Value(d);
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

inline void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

inline void write(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: out += "null"; break;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Value::Kind::Int: out += std::to_string(v.as_int()); break;
    case Value::Kind::Double: {
      double d = v.as_double();
      if (!std::isfinite(d)) throw std::runtime_error("JSON: cannot write a non-finite number");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);  // 17 significant digits: the same double back
      out += buf;
      break;
    }
    case Value::Kind::String: write_string(out, v.as_string()); break;
    case Value::Kind::Array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.as_array()) {
        if (!first) out += ',';
        first = false;
        write(out, item);
      }
      out += ']';
      break;
    }
    case Value::Kind::Object: {
      out += '{';
      bool first = true;
      for (const auto& member : v.as_object()) {
        if (!first) out += ',';
        first = false;
        write_string(out, member.first);
        out += ':';
        write(out, member.second);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace detail

inline Value parse(const std::string& text) { return detail::Reader(text).document(); }

inline std::string dump(const Value& v) {
  std::string out;
  detail::write(out, v);
  return out;
}

}  // namespace json

// -- the protocol's types -----------------------------------------------------------------

struct Parameter {
  std::string name;
  std::vector<json::Value> values;  // ordered; ints, doubles or strings
};

struct Budget {
  std::string kind;                        // "evaluations", "time" or "evaluations_or_time"
  std::optional<long long> evaluations;    // distinct valid configurations
  std::optional<double> seconds;           // simulated compile + run seconds
};

struct Problem {
  std::string space, backend, description, space_hash;
  std::vector<Parameter> parameters;
  std::vector<std::string> constraints;    // expressions; ask Client::valid instead of evaluating them
  long long cardinality = 0;
  long long valid_configurations = 0;
  Budget budget;
  std::uint64_t seed = 0;
  std::string objective, unit, goal;       // "time", "ms", "minimize"
};

using Config = std::vector<std::size_t>;   // a value index per parameter

struct Result {
  std::string kind;                        // evaluated, rejected, repeat, profile or refused
  bool charged = false;
  std::string status;                      // ok, compile_error, ..., constraint_violation ("" if refused)
  std::optional<double> objective;         // milliseconds, when status is ok
  std::vector<double> times;
  std::optional<double> compile_ms;
  double cost_s = 0.0;
  std::string message;

  bool ok() const { return status == "ok" && objective.has_value(); }
  bool refused() const { return kind == "refused"; }
  // The objective to minimise: infinity unless the evaluation was ok.
  double fitness() const { return ok() ? *objective : std::numeric_limits<double>::infinity(); }
};

// An error reply: its code (docs/PROTOCOL.md), the field at fault, the server's message.
class ServerError : public std::runtime_error {
 public:
  ServerError(std::string code, std::string field, const std::string& message)
      : std::runtime_error(code + ": " + (field.empty() ? "" : field + ": ") + message),
        code(std::move(code)), field(std::move(field)) {}
  std::string code, field;
};

class Client {
 public:
  // Speak on `in` and `out` (for example the pipes of a `bat serve` this program started).
  Client(std::istream& in, std::ostream& out) : in_(&in), out_(&out) {}

  // BAT started this program: the protocol on stdin/stdout; std::cout then writes to stderr.
  static Client stdio() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    auto protocol_out = std::make_shared<std::ostream>(std::cout.rdbuf());
    std::cout.rdbuf(std::cerr.rdbuf());
    Client c(std::cin, *protocol_out);
    c.owned_out_ = protocol_out;
    return c;
  }

  const Problem& hello(const std::string& tuner) {
    json::Value reply = request(json::Value(json::Value::Object{
        {"type", "hello"}, {"protocol", PROTOCOL_VERSION}, {"tuner", tuner}}));
    const json::Value& p = reply["problem"];
    problem_ = Problem{};
    problem_.space = p["space"].as_string();
    problem_.backend = p["backend"].as_string();
    problem_.description = p["description"].as_string();
    problem_.space_hash = p["space_hash"].as_string();
    for (const auto& param : p["parameters"].as_array())
      problem_.parameters.push_back({param["name"].as_string(), param["values"].as_array()});
    for (const auto& c : p["constraints"].as_array()) problem_.constraints.push_back(c.as_string());
    problem_.cardinality = p["cardinality"].as_int();
    problem_.valid_configurations = p["valid_configurations"].as_int();
    const json::Value& b = p["budget"];
    problem_.budget.kind = b["kind"].as_string();
    if (!b["evaluations"].is_null()) problem_.budget.evaluations = b["evaluations"].as_int();
    if (!b["seconds"].is_null()) problem_.budget.seconds = b["seconds"].as_double();
    problem_.seed = static_cast<std::uint64_t>(p["seed"].as_int());
    problem_.objective = p["objective"]["name"].as_string();
    problem_.unit = p["objective"]["unit"].as_string();
    problem_.goal = p["objective"]["goal"].as_string();
    return problem_;
  }

  const Problem& problem() const { return problem_; }

  // The configuration `config` as the protocol sends it: an object of parameter values.
  json::Value to_json(const Config& config) const {
    if (config.size() != problem_.parameters.size())
      throw std::invalid_argument("bat::Client: a configuration needs one index per parameter");
    json::Value::Object members;
    for (std::size_t j = 0; j < config.size(); ++j)
      members.emplace_back(problem_.parameters[j].name, problem_.parameters[j].values.at(config[j]));
    return json::Value(std::move(members));
  }

  Result evaluate(const Config& config) {
    json::Value reply = request(json::Value(json::Value::Object{{"type", "evaluate"}, {"config", to_json(config)}}));
    return result(reply["result"]);
  }

  // Results in order; those the budget no longer affords come back refused().
  std::vector<Result> batch(const std::vector<Config>& configs) {
    json::Value reply = request(json::Value(json::Value::Object{{"type", "batch"}, {"configs", many(configs)}}));
    std::vector<Result> out;
    for (const auto& r : reply["results"].as_array()) out.push_back(result(r));
    return out;
  }

  // Whether each configuration satisfies the constraints (nothing is evaluated or charged).
  std::vector<bool> valid(const std::vector<Config>& configs) {
    json::Value reply = request(json::Value(json::Value::Object{{"type", "valid"}, {"configs", many(configs)}}));
    std::vector<bool> out;
    for (const auto& flag : reply["valid"].as_array()) out.push_back(flag.as_bool());
    return out;
  }

  // Ends the run; the server's summary (counts, best configuration).
  json::Value done() {
    json::Value reply = request(json::Value(json::Value::Object{{"type", "done"}}));
    return reply["summary"];
  }

  // The budget as the latest result stated it.
  bool exhausted() const { return exhausted_; }
  std::optional<long long> evaluations_left() const { return evaluations_left_; }

  // Send one request, return its reply (ServerError for an error reply).
  json::Value request(const json::Value& message) {
    std::string line = json::dump(message);
    line += '\n';
    out_->write(line.data(), static_cast<std::streamsize>(line.size()));
    out_->flush();
    std::string text;
    if (!std::getline(*in_, text)) throw std::runtime_error("bat::Client: the server closed the connection");
    json::Value reply = json::parse(text);
    if (reply["type"].as_string() == "error")
      throw ServerError(reply["code"].as_string(), reply["field"].is_null() ? "" : reply["field"].as_string(),
                        reply["message"].as_string());
    if (reply.has("exhausted")) {
      exhausted_ = reply["exhausted"].as_bool();
      const json::Value& left = reply["left"]["evaluations"];
      evaluations_left_ = left.is_null() ? std::nullopt : std::optional<long long>(left.as_int());
    }
    return reply;
  }

 private:
  json::Value many(const std::vector<Config>& configs) const {
    json::Value::Array items;
    items.reserve(configs.size());
    for (const auto& c : configs) items.push_back(to_json(c));
    return json::Value(std::move(items));
  }

  static Result result(const json::Value& r) {
    Result out;
    out.kind = r["kind"].as_string();
    out.charged = r["charged"].as_bool();
    if (!r["status"].is_null()) out.status = r["status"].as_string();
    if (!r["objective"].is_null()) out.objective = r["objective"].as_double();
    for (const auto& t : r["times"].as_array()) out.times.push_back(t.as_double());
    if (!r["compile_ms"].is_null()) out.compile_ms = r["compile_ms"].as_double();
    out.cost_s = r["cost_s"].as_double();
    out.message = r["message"].as_string();
    return out;
  }

  std::istream* in_;
  std::ostream* out_;
  std::shared_ptr<std::ostream> owned_out_;
  Problem problem_;
  bool exhausted_ = false;
  std::optional<long long> evaluations_left_;
};

}  // namespace bat

#endif  // BAT_CLIENT_HPP
