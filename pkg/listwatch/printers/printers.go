package printers

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// Printer renders rows of one resource the way kube-apiserver's table
// convertor for it does (pkg/printers/internalversion/printers.go, always
// generated wide: kubectl drops the priority-1 columns unless -o wide).
type Printer struct {
	Columns []metav1.TableColumnDefinition
	// Row returns the cells and conditions of one object's raw JSON;
	// now is the server time ages are measured against.
	Row RowFunc
	// EmptyRows makes an empty Table's rows [] rather than null, as kube's
	// resource printers (not its default convertor) answer.
	EmptyRows bool
}

// RowFunc returns the cells and row conditions of one object's raw JSON.
type RowFunc func(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error)

// For returns the printer of gr: kube's resource printer where one exists,
// else the default convertor (custom resources, and built-in kinds kube
// prints with it too).
func For(gr schema.GroupResource) Printer {
	if p, ok := printers[gr]; ok {
		return p
	}
	return defaultPrinter
}

// printers are the resource-specific convertors, one map per API group;
// other resources get the default Name and Created At columns.
var printers = merge(corePrinters(), coordinationPrinters(), discoveryPrinters(),
	eventsPrinters(), networkingPrinters(), nodePrinters(), storagePrinters())

func merge(groups ...map[schema.GroupResource]Printer) map[schema.GroupResource]Printer {
	all := map[schema.GroupResource]Printer{}
	for _, g := range groups {
		for gr, p := range g {
			if _, dup := all[gr]; dup {
				panic(fmt.Sprintf("printers: %s registered twice", gr))
			}
			all[gr] = p
		}
	}
	return all
}

// resourcePrinter is kube's printer for a resource: its columns, and a row
// function over the typed object.
func resourcePrinter[T any](columns []metav1.TableColumnDefinition, row func(obj *T, now time.Time) []any) Printer {
	return Printer{Columns: columns, Row: typedRow(row), EmptyRows: true}
}

// typedRow adapts a row function over T to raw JSON, with no row
// conditions.
func typedRow[T any](row func(obj *T, now time.Time) []any) RowFunc {
	return func(raw []byte, now time.Time) ([]any, []metav1.TableRowCondition, error) {
		obj := new(T)
		if err := json.Unmarshal(raw, obj); err != nil {
			return nil, nil, fmt.Errorf("decode %s: %w", reflect.TypeFor[T]().Name(), err)
		}
		return row(obj, now), nil, nil
	}
}

// defaultPrinter is kube-apiserver's default table convertor
// (pkg/registry/rest/table.go): Name and Created At.
var defaultPrinter = Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: createdDescription},
	},
	Row: func(raw []byte, _ time.Time) ([]any, []metav1.TableRowCondition, error) {
		m, err := ObjectMeta(raw)
		if err != nil {
			return nil, nil, err
		}
		return []any{m.Name, m.CreationTimestamp.UTC().Format(time.RFC3339)}, nil, nil
	},
}

// ObjectMeta decodes the metadata of an object's raw JSON.
func ObjectMeta(raw []byte) (metav1.ObjectMeta, error) {
	var doc struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return metav1.ObjectMeta{}, fmt.Errorf("decode metadata: %w", err)
	}
	return doc.Metadata, nil
}

// Column descriptions, as kube's printers take them from the API docs.
var (
	nameDescription    = metav1.ObjectMeta{}.SwaggerDoc()["name"]
	createdDescription = metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]
)

// The Name and Age columns almost every printer has.
var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: nameDescription}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: createdDescription}
)

// Placeholders kube's printers show for unset values.
const (
	noneValue    = "<none>"
	unknownValue = "<unknown>"
	unsetValue   = "<unset>"
)

// age is kube's translateTimestampSince.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return unknownValue
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// microAge is kube's translateMicroTimestampSince.
func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return unknownValue
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func orUnknown(s string) string {
	if s == "" {
		return unknownValue
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return noneValue
	}
	return s
}

// deref is *p, or def when p is nil.
func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
