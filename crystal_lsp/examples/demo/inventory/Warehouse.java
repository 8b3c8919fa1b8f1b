package inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

public class Warehouse {
    private final Map<String, Integer> levels;

    public Warehouse(Map<String, Integer> levels) {
        this.levels = levels;
    }

    public List<String> lowStock(int threshold) {
        List<String> result = new ArrayList<>();
        for (Map.Entry<String, Integer> entry : levels.entrySet()) {
            if (entry.getValue() < threshold) {
                result.add(entry.getKey());
            }
        }
        result.sort(String::compareTo);
        return result;
    }

    public int totalUnits() {
        int total = 0;
        for (int units : levels.values()) {
            total += units;
        }
        return total;
    }
}
