package billing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

public class InvoiceDao {
    private final Connection conn;

    public InvoiceDao(Connection conn) {
        this.conn = conn;
    }

    public Invoice byId(long id) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT id, ref, total FROM invoices WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Invoice(rs.getLong(1), rs.getString(2), rs.getLong(3)) : null;
            }
        }
    }

    public List<Invoice> byCustomerRef(String ref) throws SQLException {
        List<Invoice> out = new ArrayList<>();
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT id, ref, total FROM invoices WHERE customer_ref = '" + ref + "'")) {
            while (rs.next()) {
                out.add(new Invoice(rs.getLong(1), rs.getString(2), rs.getLong(3)));
            }
        }
        return out;
    }
}
