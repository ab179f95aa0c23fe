package engine

import (
	"encoding/binary"
	"encoding/json"

	"lastro/ddblocal/internal/storage"
	"lastro/ddblocal/internal/wire"
)

// Table operations run synchronously: a table, an index or a change is
// usable as soon as the call returns. Responses still carry the transient
// states DynamoDB reports in them (CREATING, UPDATING, DELETING), while
// DescribeTable reports the settled state.

// PersistDef writes a table definition to the catalog.
func (s *Store) PersistDef(d *TableDef) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	b := s.DB.NewBatch()
	defer b.Close()
	b.Set(storage.TableKey(d.Name), raw)
	b.Set(storage.NextIDKey, binary.BigEndian.AppendUint32(nil, s.NextID))
	return b.Commit()
}

func TableNotFound(name string) *wire.APIError {
	return wire.NotFound("Requested resource not found: Table: " + wire.TableNameOf(name) + " not found")
}

// LookupTable validates a TableName-only request and finds its table.
func (s *Store) LookupTable(body []byte) (*Table, error) {
	var in wire.TableNameInput
	if err := wire.Decode(body, &in); err != nil {
		return nil, err
	}
	var c wire.Constraints
	c.TableName("tableName", in.TableName)
	if err := c.Err(); err != nil {
		return nil, err
	}
	t := s.Table(*in.TableName)
	if t == nil {
		return nil, TableNotFound(*in.TableName)
	}
	return t, nil
}

// lookupForDescribe is lookupTable under the name other operations use.
func (s *Store) lookupForDescribe(body []byte) (*Table, error) { return s.LookupTable(body) }
