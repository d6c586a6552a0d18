package budgets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefinitions(t *testing.T) {
	fn := func(name string, from, to int) Def {
		return Def{Name: name, Kind: "function", StartLine: from, EndLine: to}
	}
	method := func(name string, from, to int) Def {
		return Def{Name: name, Kind: "method", StartLine: from, EndLine: to}
	}
	class := func(name string, from, to int) Def {
		return Def{Name: name, Kind: "class", StartLine: from, EndLine: to}
	}
	typ := func(name string, from, to int) Def {
		return Def{Name: name, Kind: "type", StartLine: from, EndLine: to}
	}
	test := func(d Def) Def { d.Test = true; return d }

	tests := []struct {
		name string
		lang Lang
		file string // in testdata/, or
		src  string
		want []Def
	}{
		{name: "python sample", file: "sample.py", want: []Def{
			class("Greeter", 10, 21), method("greet", 13, 21), test(fn("test_greet", 24, 25)),
		}},
		{name: "pytest classes and decorators", lang: LangPython, src: "@pytest.mark.slow\ndef test_a():\n    pass\n\nclass TestX:\n    def test_b(self):\n        def inner(): pass\n    async def helper(self): pass\n\ndef testing_helper(): pass\n",
			want: []Def{
				test(fn("test_a", 1, 3)), test(class("TestX", 5, 8)), test(method("test_b", 6, 7)),
				fn("inner", 7, 7), method("helper", 8, 8), fn("testing_helper", 10, 10),
			}},
		{name: "go sample", file: "sample.go", want: []Def{
			typ("Greeter", 8, 10), method("Greet", 18, 23), test(fn("TestGreet", 25, 26)),
		}},
		{name: "go tests, benchmarks, fuzz and look-alikes", lang: LangGo, src: "package p\n\nfunc BenchmarkX(b *testing.B) {}\nfunc FuzzX(f *testing.F) {}\nfunc Testify() {}\nfunc TestNoArg() {}\nfunc TestWrong(b *testing.B) {}\ntype (\n\tA int\n\tB = string\n)\n",
			want: []Def{
				test(fn("BenchmarkX", 3, 3)), test(fn("FuzzX", 4, 4)), fn("Testify", 5, 5), fn("TestNoArg", 6, 6),
				fn("TestWrong", 7, 7), typ("A", 9, 9), typ("B", 10, 10),
			}},
		{name: "javascript sample", file: "sample.js", want: []Def{
			fn("add", 4, 7), fn("greet", 10, 11), class("Counter", 13, 18), method("inc", 15, 17),
			test(class("add", 20, 24)), test(fn("adds numbers", 21, 23)),
		}},
		{name: "typescript sample", file: "sample.ts", want: []Def{
			typ("Point", 2, 5), fn("dist", 8, 13), typ("Pair", 15, 15), test(fn("dist is zero for equal points", 17, 19)),
		}},
		{name: "typescript variants", lang: LangTypeScript, src: "abstract class C {}\nenum E { A }\nconst f = async function () {};\nlet g = (a) => a, h = 2;\nit.each([1])('case %d', (n) => {});\ntest.skip(`tmpl`, () => {});\nfunction* gen() {}\nre.test('x');\ndescribe(Foo, () => {});\n",
			want: []Def{
				class("C", 1, 1), typ("E", 2, 2), fn("f", 3, 3), fn("g", 4, 4),
				test(fn("case %d", 5, 5)), test(fn("tmpl", 6, 6)), fn("gen", 7, 7),
			}},
		{name: "tsx sample", file: "sample.tsx", want: []Def{
			fn("Hello", 4, 12), test(fn("renders", 14, 16)),
		}},
		{name: "rust sample", file: "sample.rs", want: []Def{
			typ("Point", 7, 10), method("new", 14, 17), fn("text", 22, 25), test(fn("new_works", 27, 30)),
		}},
		{name: "rust test attributes", lang: LangRust, src: "mod tests {\n    /// Doc.\n    #[tokio::test(flavor = \"multi_thread\")]\n    async fn a() {}\n    #[cfg(test)]\n    fn b() {}\n}\ntrait T { fn c(&self) {} }\n",
			want: []Def{test(fn("a", 3, 4)), fn("b", 5, 6), typ("T", 8, 8), method("c", 8, 8)}},
		{name: "java sample", file: "sample.java", want: []Def{
			class("Calc", 8, 26), method("add", 13, 17), test(method("addWorks", 19, 25)),
		}},
		{name: "java junit4 and parameterized", lang: LangJava, src: "interface I {}\nclass T {\n  @org.junit.Test public void a() {}\n  @ParameterizedTest @ValueSource(ints = {1}) void b(int x) {}\n  T() {}\n}\n",
			want: []Def{typ("I", 1, 1), class("T", 2, 6), test(method("a", 3, 3)), test(method("b", 4, 4)), method("T", 5, 5)}},
		{name: "c sample", file: "sample.c", want: []Def{
			fn("add", 6, 9), typ("point", 14, 16), fn("greet", 19, 22),
		}},
		{name: "cpp sample", file: "sample.cpp", want: []Def{
			class("Greeter", 6, 10), method("Greeter::greet", 13, 17),
		}},
		{name: "cpp gtest and templates", lang: LangCPP, src: "TEST(Suite, Name) {\n  EXPECT_EQ(1, 1);\n}\nstruct P { int x; void m() {} };\ntemplate <typename T> T id(T x) { return x; }\nint* ptr(void) { return 0; }\n",
			want: []Def{test(fn("Suite.Name", 1, 3)), class("P", 4, 4), method("m", 4, 4), fn("id", 5, 5), fn("ptr", 6, 6)}},
		{name: "csharp sample", file: "sample.cs", want: []Def{
			class("Calc", 8, 21), method("Add", 11, 11), test(method("AddWorks", 14, 20)),
		}},
		{name: "csharp nunit and mstest", lang: LangCSharp, src: "interface I {}\nclass T {\n  [Test] public void A() {}\n  [TestMethod, Owner(\"x\")] public void B() {}\n  [SetUp] public void C() {}\n}\n",
			want: []Def{typ("I", 1, 1), class("T", 2, 6), test(method("A", 3, 3)), test(method("B", 4, 4)), method("C", 5, 5)}},
		{name: "ruby sample", file: "sample.rb", want: []Def{
			class("Greeter", 5, 17), method("greet", 7, 10), method("poem", 12, 16), test(fn("test_greet", 23, 25)),
		}},
		{name: "rspec", lang: LangRuby, src: "RSpec.describe Greeter do\n  context \"when x\" do\n    it \"greets\" do\n      expect(1).to eq 1\n    end\n  end\n  it('works') { expect(2) }\n  let(:x) { 1 }\nend\nmodule M\n  def self.s; end\nend\n",
			want: []Def{
				test(class("Greeter", 1, 9)), test(class("when x", 2, 6)), test(fn("greets", 3, 5)), test(fn("works", 7, 7)),
				class("M", 10, 12), method("s", 11, 11),
			}},
		{name: "bash sample", file: "sample.sh", want: []Def{fn("greet", 7, 10)}},
		{name: "shunit2", lang: LangBash, src: "function testAdd {\n  assertEquals 1 1\n}\n", want: []Def{test(fn("testAdd", 1, 3))}},
		{name: "no grammar", lang: "", src: "def f(): pass\n", want: nil},
		{name: "empty", lang: LangGo, src: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, lang := []byte(tt.src), tt.lang
			if tt.file != "" {
				var err error
				if src, err = os.ReadFile(filepath.Join("testdata", tt.file)); err != nil {
					t.Fatal(err)
				}
				lang = LangOf(tt.file)
			}
			got := Definitions(lang, src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Definitions mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzDefinitions(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, li uint8, src []byte) {
		l := allLangs[int(li)%len(allLangs)]
		n := lineCount(src)
		for _, d := range Definitions(l, src) {
			if d.StartLine < 1 || d.EndLine < d.StartLine || d.EndLine > n {
				t.Fatalf("%s: %+v outside lines 1..%d", l, d, n)
			}
		}
		// Definitions and Classify share a parse; check both survive it.
		if c := Count(l, src); c.Total() != n {
			t.Fatalf("%s: Count totals %d, want %d", l, c.Total(), n)
		}
	})
}
