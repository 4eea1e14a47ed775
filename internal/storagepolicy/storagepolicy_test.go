package storagepolicy

import "testing"

func TestTable(t *testing.T) {
	seen := map[ID]bool{}
	for _, p := range All() {
		if p.ID == Unspecified || seen[p.ID] {
			t.Fatalf("policy %s: id %d", p.Name, p.ID)
		}
		seen[p.ID] = true
		if q, ok := ByName(p.Name); !ok || q.ID != p.ID {
			t.Fatalf("ByName(%s) = %+v", p.Name, q)
		}
	}
	if p, ok := ByName("hot"); !ok || !p.Pin {
		t.Fatalf("hot: %+v", p)
	}
	if _, ok := ByName("LAZY_PERSIST"); ok {
		t.Fatal("an unknown name was found")
	}
	if Of(Unspecified).ID != Warm || Of(200).ID != Warm || Of(Cold).ID != Cold {
		t.Fatal("Of")
	}
	if !StoreHasClasses("s3://b/p?endpoint=http://x") || StoreHasClasses("file:///d") || StoreHasClasses("%") {
		t.Fatal("StoreHasClasses")
	}
}
