package seal

import "testing"

// secretBytes is the size of a typical Secret object's JSON (bytes).
const secretBytes = 4 << 10

// BenchmarkSealOpen seals and opens one Secret-sized value, the cost a
// Secret adds to a commit and to a restore.
func BenchmarkSealOpen(b *testing.B) {
	key, err := Generate()
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(key)
	if err != nil {
		b.Fatal(err)
	}
	plain, ad := make([]byte, secretBytes), []byte("objects\x00/v1/secrets\x00ns\x00name")
	b.SetBytes(secretBytes)
	for b.Loop() {
		sealed, err := a.Seal(plain, ad)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Open(sealed, ad); err != nil {
			b.Fatal(err)
		}
	}
}
