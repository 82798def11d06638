-- Generate one C++ translation unit for the benchmark profile (README.md).
-- A compile's callgrind profile grows with the amount of *distinct* compiler
-- code that runs, not with the size of the input, so this source is broad, not
-- long: C++20 language features, a few std templates, constant folding of math
-- functions (MPFR/MPC), decimal float, OpenMP, loop nests for Graphite (isl)
-- and GNU vector arithmetic over every element type (many x86 patterns).
-- Usage: lua5.4 bench/gen.lua > big.cpp     (compile with -std=gnu++20)

local out = {}
local function emit(s) out[#out + 1] = s end

-- C++20 language features and GNU extensions, little library code.
emit [==[
#include <compare>
#include <concepts>
#include <coroutine>
#include <cstdarg>
#include <cstdio>
#include <initializer_list>
#include <typeinfo>
#include <utility>
template <class... T> constexpr auto fold(T... t) { return (t + ... + 0); }
template <class T> concept Addable = requires(T a, T b) { { a + b } -> std::convertible_to<T>; };
template <Addable T> constexpr T twice(T x) { return x + x; }
consteval int sq(int x) { return x * x; }
constexpr int fib(int n) {
  int a = 0, b = 1;
  for (int i = 0; i < n; i++) { int t = a + b; a = b; b = t; }
  return a;
}
static_assert(fib(30) == 832040 && sq(12) == 144 && fold(1, 2, 3) == 6 && twice(2) == 4);
struct P { int x, y; auto operator<=>(const P &) const = default; };
struct Q { int a; double b; char c[4]; };
Q q{ .a = 1, .b = 2.5, .c = "ab" };
struct VB { virtual ~VB() = default; virtual int v() const { return 1; } int z = 0; };
struct L : virtual VB { int v() const override { return 2; } };
struct R : virtual VB { int v() const override { return 3; } };
struct LR final : L, R { int v() const override { return L::v() + R::v(); } };
int dyn(VB *p) {
  if (auto *l = dynamic_cast<L *>(p)) return l->v();
  return typeid(*p) == typeid(LR) ? 7 : 0;
}
long double operator""_km(long double x) { return x * 1000; }
auto km = 1.5_km;
template <int N> struct Fact { static constexpr long v = N * Fact<N - 1>::v; };
template <> struct Fact<0> { static constexpr long v = 1; };
long f20 = Fact<20>::v;
template <class T, class U> struct Pair { T t; U u; template <class V> auto add(V v) const { return t + u + v; } };
Pair(int, double) -> Pair<int, double>;
auto pr = Pair{1, 2.0}.add(3u);
int sb() {
  P arr[2] = {{1, 2}, {3, 4}}; int s = 0;
  for (auto [x, y] : arr) s += x * y;
  return s + (arr[0] < arr[1]);
}
int lam(int k) {
  auto f = [k]<class T>(T x) mutable { return k += (int)x; };
  auto g = [=, &k](auto... xs) { return (xs * ... * k); };
  return f(2) + f(3.5) + g(1, 2, 3);
}
struct Gen {
  struct promise_type {
    int cur = 0;
    Gen get_return_object() { return Gen{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(int v) { cur = v; return {}; }
    void return_void() {}
    void unhandled_exception() { throw; }
  };
  std::coroutine_handle<promise_type> h;
  ~Gen() { if (h) h.destroy(); }
};
Gen counter(int n) { for (int i = 0; i < n; i++) co_yield i * i; }
int co() { Gen g = counter(5); int s = 0; while (!g.h.done()) { g.h.resume(); s += g.h.promise().cur; } return s; }
struct E { int code; };
int exc(int x) {
  try { if (x > 3) throw E{x}; if (x < 0) throw x; return x; }
  catch (const E &e) { return e.code; } catch (...) { return -1; }
}
int vlog(const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); int r = vfprintf(stderr, fmt, ap); va_end(ap); return r;
}
int pf(int a, double b, const char *s) {
  return std::printf("%d %5.2f %s %x %lu %p\n", a, b, s, a, (unsigned long)a, (void *)s) + vlog("%s", s);
}
int bits(unsigned x) {
  return __builtin_popcount(x) + __builtin_clz(x | 1) + __builtin_ctz(x | 8) + __builtin_parity(x)
    + (int)__builtin_bswap32(x);
}
__int128 wide(__int128 a, __int128 b) { return a * b / (b | 1) % 1000000007; }
_Float128 q128(_Float128 a) { return a * a + 1; }
struct Bits { unsigned a : 3, b : 5, c : 7; signed d : 9; };
int bf(Bits b) { return b.a + b.b * b.c - b.d; }
int cg(int i) { static void *t[] = { &&l0, &&l1, &&l2 }; goto *t[i % 3]; l0: return 1; l1: return 2; l2: return 3; }
int vla(int n) { int a[n]; for (int i = 0; i < n; i++) a[i] = i; return a[n / 2]; }
int asmf(int x) { int r; __asm__("lea 1(%1), %0" : "=r"(r) : "r"(x)); return r; }
__attribute__((noinline, cold)) int coldf(int x) { return x / 3; }
__attribute__((target_clones("default", "avx2"))) int clones(const int *a, int n) {
  int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s;
}
[[nodiscard]] inline int odr(int x) noexcept { return x << 1; }
union U { float f; unsigned u; };
unsigned pun(float f) { U u; u.f = f; return u.u; }
enum class Color : unsigned char { Red, Green, Blue };
constexpr const char *name(Color c) {
  switch (c) { case Color::Red: return "r"; case Color::Green: return "g"; default: return "b"; }
}
thread_local int tls = 5;
int tl() { return ++tls; }
]==]

-- Classes, exceptions, a switch table, a little of the std library.
emit [==[
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>
template <class T, int N> struct Vec {
  T a[N];
  T dot(const Vec &o) const { T s{}; for (int i = 0; i < N; i++) s += a[i] * o.a[i]; return s; }
};
double vdot(const Vec<double, 16> &a, const Vec<double, 16> &b) { return a.dot(b); }
int idot(const Vec<int, 64> &a, const Vec<int, 64> &b) { return a.dot(b); }
struct Base { virtual ~Base() {} virtual int f(int) = 0; };
struct D1 : Base { int f(int x) override { return x * 3; } };
struct D2 : Base { int f(int x) override { return x ^ 7; } };
int virt(Base *b, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) { try { s += b->f(i); if (s > 1000) throw 1; } catch (int e) { s -= e; } }
  return s;
}
long sw(int x) {
  switch (x) { case 0: return 5; case 1: return 9; case 2: return 17; case 3: return 1; case 7: return 99; }
  return x * 11L;
}
int stdmix(const std::vector<std::string> &v, std::variant<int, std::string> var, std::optional<int> o) {
  std::map<std::string, int> m; std::unordered_map<std::string, double> u;
  for (const auto &s : v) { m[s]++; u[s] += 1.5; }
  std::vector<int> w; for (auto &[k, x] : m) w.push_back(x + (int)k.size());
  std::sort(w.begin(), w.end(), std::greater<>()); w.erase(std::unique(w.begin(), w.end()), w.end());
  auto sp = std::make_shared<std::vector<int>>(w); std::unique_ptr<Base> b = std::make_unique<D1>();
  std::function<int(int)> fn = [&](int x) { return x + (int)sp->size() + b->f(x); };
  int vv = std::visit([](auto &&x) -> int {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) return (int)x.size(); else return x;
  }, var);
  return fn(o.value_or(0)) + vv + (int)u.size();
}
]==]

-- Math calls with constant arguments: folded at compile time by MPFR and MPC.
emit [==[
#include <cmath>
#include <complex>
double m[] = { std::sin(0.5), std::cos(0.5), std::tan(0.5), std::asin(0.5), std::acos(0.5), std::atan(0.5),
  std::atan2(1.0, 2.0), std::sinh(0.5), std::cosh(0.5), std::tanh(0.5), std::asinh(0.5), std::acosh(1.5),
  std::atanh(0.5), std::exp(0.5), std::exp2(0.5), std::expm1(0.5), std::log(0.5), std::log10(0.5), std::log2(0.5),
  std::log1p(0.5), std::pow(1.5, 2.5), std::sqrt(2.0), std::cbrt(2.0), std::hypot(3.0, 4.0), std::erf(0.5),
  std::erfc(0.5), std::tgamma(0.5), std::lgamma(0.5), std::ceil(0.5), std::floor(0.5), std::fmod(5.5, 2.0),
  std::remainder(5.5, 2.0), std::fma(1.0, 2.0, 3.0), ::jn(2, 0.5), ::yn(2, 0.5), ::j0(0.5), ::j1(0.5), ::y0(0.5),
  ::y1(0.5), std::nextafter(1.0, 2.0), std::ldexp(1.0, 5), std::scalbn(1.0, 3), std::logb(8.0), std::round(2.5),
  std::trunc(2.5), std::rint(2.5) };
float mf[] = { std::sin(0.5f), std::exp(0.5f), std::pow(1.5f, 2.5f), std::lgamma(0.5f), std::cbrt(2.0f) };
long double ml[] = { std::sin(0.5L), std::exp(0.5L), std::pow(1.5L, 2.5L), std::tgamma(0.5L), std::erf(0.5L) };
using C = std::complex<double>;
C mc[] = { std::sin(C(1, 2)), std::exp(C(1, 2)), std::pow(C(1, 2), 2.5), std::log(C(1, 2)), std::sqrt(C(1, 2)),
  std::tanh(C(1, 2)), std::asin(C(1, 2)) };
double cx(double x) {
  _Complex double z = x + 2.0j;
  return __real__ (__builtin_csin(z) * __builtin_cpow(z, 3.0 + 1.0j) / __builtin_cexp(z));
}
]==]

-- Decimal floating point (libdecnumber).
emit [==[
#include <decimal/decimal>
using namespace std::decimal;
decimal64 dec(decimal64 a, decimal128 b) { return a * decimal64(3) + decimal64(b / decimal128(7)); }
]==]

-- OpenMP constructs (-fopenmp): lowering and expansion passes.
emit [==[
void omp(float *x, const float *y, int n) {
#pragma omp parallel for simd schedule(dynamic, 4) reduction(+:x[0:1])
  for (int i = 1; i < n; i++) x[0] += y[i] * y[i];
#pragma omp parallel
  {
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task firstprivate(i) depend(out: x[i])
      x[i] = y[i] * 2;
    }
#pragma omp taskwait
#pragma omp for collapse(2) lastprivate(n)
    for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) x[i * 8 + j] += 1;
#pragma omp critical
    x[0]++;
#pragma omp atomic
    x[1] += 2;
#pragma omp barrier
#pragma omp sections
    {
#pragma omp section
      x[2] = 1;
#pragma omp section
      x[3] = 2;
    }
  }
#pragma omp target teams distribute parallel for map(tofrom: x[0:n])
  for (int i = 0; i < n; i++) x[i] *= 2;
#pragma omp taskloop grainsize(4)
  for (int i = 0; i < n; i++) x[i] -= 1;
}
]==]

-- Affine loop nests for Graphite (-floop-nest-optimize runs isl).
emit [==[
void mm(double (*__restrict c)[256], const double (*__restrict a)[256], const double (*__restrict b)[256]) {
  for (int i = 0; i < 256; i++)
    for (int j = 0; j < 256; j++)
      for (int k = 0; k < 256; k++) c[i][j] += a[i][k] * b[k][j];
}
void stencil(double (*__restrict u)[512], const double (*__restrict v)[512]) {
  for (int t = 0; t < 10; t++)
    for (int i = 1; i < 511; i++)
      for (int j = 1; j < 511; j++) u[i][j] = 0.25 * (v[i - 1][j] + v[i + 1][j] + v[i][j - 1] + v[i][j + 1]);
}
]==]

-- GNU vector extensions: every element type, each at one width (16, 32, 64
-- bytes in turn), with arithmetic, a compare, a select and a vectorizable loop.
local types = { "signed char", "unsigned char", "short", "unsigned short", "int",
  "unsigned", "long long", "unsigned long long", "float", "double" }
for n, t in ipairs(types) do
  local V, size = "vec" .. n, 16 << ((n - 1) % 3)
  local ops = { "+", "-", "*", "/" }
  if t ~= "float" and t ~= "double" then
    for _, o in ipairs { "&", "|", "^", "<<", ">>", "%" } do ops[#ops + 1] = o end
  end
  emit(("typedef %s %s __attribute__((vector_size(%d)));"):format(t, V, size))
  for i, o in ipairs(ops) do
    emit(("%s vop%d_%d(%s a, %s b) { return a %s b; }"):format(V, n, i, V, V, o))
  end
  emit(("%s vmin%d(%s a, %s b) { return a < b ? a : b; }"):format(V, n, V, V))
  emit(("%s vcmp%d(%s a, %s b) { return a > b; }"):format(V, n, V, V))
  emit(("void vloop%d(%s *__restrict a, const %s *__restrict b, int n) {\n"
    .. "  for (int i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] - b[i] : b[i] * (%s)3;\n}"):format(n, t, t, t))
end

io.write(table.concat(out, "\n"), "\n")
